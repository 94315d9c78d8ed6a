"""``python -m labkit.bench unigram``: Unigram throughput, labkit vs sentencepiece, one run.

The workload is botchan.txt's lines, repeated to about ``--mb`` MB, each line encoded on
its own (a line is what a serving system tokenizes; one megabyte-long string is not). One
thread; every engine timed in the same run, median of ``--repeat`` runs. labkit is timed
*cold* (word cache emptied before each run) and *warm* (cache filled by an untimed run):
the cache is exact, since a word is only reused when its Viterbi decisions cannot be
flipped by rounding. ``encode`` builds a full Encoding (ids, tokens, offsets);
``encode_ordinary`` is ids only, like the reference ``SentencePieceProcessor.encode``,
against which ``x sentencepiece`` is taken; ``x sp same output`` compares an Encoding with
sentencepiece asked for offsets too. ``tokenizers`` is shown when it can serve the file.
Introduced in notebook ``05_unigram_trie_viterbi``.

Example: ``python -m labkit.bench unigram --mb 0.5 --repeat 3``
"""
from __future__ import annotations

import argparse
import os

from labkit.bench.harness import corpus_lines, median_seconds, table

VOCABS = ("botchan-unigram",)


def workload(megabytes: float) -> list[str]:
    """botchan's non-empty lines, repeated to about ``megabytes`` MB of UTF-8.

    Example: ``len(workload(0.1))`` -> about 1,500 lines
    """
    lines = corpus_lines()
    size = sum(len(line.encode("utf-8")) for line in lines)
    copies = max(1, round(megabytes * 1_000_000 / size))
    return lines * copies


def measure(name: str, lines: list[str], repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one Unigram vocabulary (labkit cold/warm, sentencepiece, tokenizers).

    Example: ``measure("botchan-unigram", workload(0.05), repeat=1)[0]["engine"]`` -> ``'labkit cold encode_ordinary'``
    """
    import labkit

    megabytes = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    tok = labkit.load(name, engine="labkit")
    sp = labkit.load(name, engine="sentencepiece").backend
    rows = []

    def cold():
        tok.word_cache.clear()
        return [tok.encode_ordinary(line) for line in lines]

    rows.append(dict(vocab=name, engine="labkit cold encode_ordinary", seconds=median_seconds(cold, repeat)))
    labkit_ids = [tok.encode_ordinary(line) for line in lines]
    rows.append(dict(vocab=name, engine="labkit warm encode_ordinary",
                     seconds=median_seconds(lambda: [tok.encode_ordinary(line) for line in lines], repeat)))
    rows.append(dict(vocab=name, engine="labkit warm encode",
                     seconds=median_seconds(lambda: [tok.encode(line) for line in lines], repeat),
                     exact=[tok.encode(line, parse_special=False).ids for line in lines[:2000]] == labkit_ids[:2000]))
    sp_ids = [sp.encode(line) for line in lines]
    rows.append(dict(vocab=name, engine="sentencepiece encode (ids)",
                     seconds=median_seconds(lambda: [sp.encode(line) for line in lines], repeat),
                     exact=sp_ids == labkit_ids))
    rows.append(dict(vocab=name, engine="sentencepiece encode (ids + offsets)",
                     seconds=median_seconds(lambda: [sp.encode(line, out_type="offset_mapping", return_bytes=False)
                                                     for line in lines], repeat)))
    try:
        hf = labkit.load(name, engine="hf").backend
    except labkit.LabkitError:
        hf = None
    if hf is not None:
        hf_ids = [hf.encode(line, add_special_tokens=False).ids for line in lines]
        rows.append(dict(vocab=name, engine="tokenizers encode",
                         seconds=median_seconds(lambda: [hf.encode(line, add_special_tokens=False) for line in lines], repeat),
                         exact=hf_ids == labkit_ids))
    base = next(r["seconds"] for r in rows if r["engine"] == "sentencepiece encode (ids)")
    with_offsets = next(r["seconds"] for r in rows if r["engine"] == "sentencepiece encode (ids + offsets)")
    for row in rows:
        row["MB/s"] = megabytes / row["seconds"]
        row["x sentencepiece"] = base / row["seconds"]
        # an Encoding carries offsets: compare it with sentencepiece producing offsets too
        same = with_offsets if row["engine"] in ("labkit warm encode", "tokenizers encode") else base
        row["x sp same output"] = same / row["seconds"]
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit status 1 if sentencepiece disagrees with labkit's ids."""
    parser = argparse.ArgumentParser(prog="python -m labkit.bench unigram", description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=1.0, help="workload size in MB (botchan lines repeated)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine (median)")
    args = parser.parse_args(argv or [])
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    lines = workload(args.mb)
    size = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    print(f"workload: {len(lines):,} botchan lines, {size:.2f} MB, each encoded alone; median of {args.repeat}, single thread")
    rows = []
    for name in VOCABS:
        rows.extend(measure(name, lines, args.repeat))
    print(table(rows, ["vocab", "engine", "MB/s", "x sentencepiece", "x sp same output", "exact"]))
    return 1 if any(r.get("exact") is False and r["engine"].startswith("sentencepiece") for r in rows) else 0
