"""``python -m labkit.bench spm``: SentencePiece BPE throughput, labkit vs sentencepiece vs tokenizers.

botchan.txt repeated to about 1 MB, one thread, every engine timed in the same run (median
of ``--repeat`` runs). labkit is timed *cold* (word cache emptied before each run) and
*warm* (cache filled by an untimed run first). labkit's ``encode`` builds a full Encoding
(ids, tokens, offsets); ``encode_ordinary`` is ids only. The reference is
``SentencePieceProcessor.encode(text)`` (ids only, called directly), and every ratio is
against it; ``tokenizers`` ``encode`` is shown too.
Introduced in notebook ``03_bpe_sentencepiece``.

Example: ``python -m labkit.bench spm --mb 0.5 --repeat 3``
"""
from __future__ import annotations

import argparse
import os

from labkit.bench.harness import corpus, median_seconds, table

VOCABS = ("llama-spm", "botchan-bpe")


def measure(name: str, text: str, repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one bundled SentencePiece BPE vocab.

    Example: ``measure("llama-spm", corpus(0.1), repeat=1)[0]["engine"]`` -> ``'labkit cold encode'``
    """
    import labkit

    megabytes = len(text.encode("utf-8")) / 1e6
    tok = labkit.load(name, engine="labkit")
    sp = labkit.load(name, engine="sentencepiece").backend
    hf = labkit.load(name, engine="hf").backend
    rows = []

    def cold():
        tok.clear_cache()
        return tok.encode(text)

    rows.append(dict(vocab=name, engine="labkit cold encode", seconds=median_seconds(cold, repeat)))
    labkit_ids = tok.encode(text).ids
    rows.append(dict(vocab=name, engine="labkit warm encode", seconds=median_seconds(lambda: tok.encode(text), repeat)))
    tok.encode_ordinary(text)
    rows.append(dict(vocab=name, engine="labkit warm encode_ordinary",
                     seconds=median_seconds(lambda: tok.encode_ordinary(text), repeat)))
    sp_ids = sp.encode(text)
    rows.append(dict(vocab=name, engine="sentencepiece encode (ids)", seconds=median_seconds(lambda: sp.encode(text), repeat),
                     exact=list(sp_ids) == labkit_ids))
    hf_ids = hf.encode(text, add_special_tokens=False).ids
    rows.append(dict(vocab=name, engine="tokenizers encode", seconds=median_seconds(lambda: hf.encode(text, add_special_tokens=False), repeat),
                     exact=list(hf_ids) == labkit_ids))
    base = rows[3]["seconds"]
    for row in rows:
        row["MB/s"] = megabytes / row["seconds"]
        row["x sentencepiece"] = base / row["seconds"]
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit status 1 if a reference disagrees with labkit's ids."""
    parser = argparse.ArgumentParser(prog="python -m labkit.bench spm", description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=1.0, help="corpus size in MB (botchan repeated)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine (median)")
    parser.add_argument("--vocab", action="append", choices=VOCABS, help="vocab(s) to run (default: all)")
    args = parser.parse_args(argv or [])
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    text = corpus(args.mb)
    print(f"corpus: botchan.txt repeated, {len(text.encode('utf-8')) / 1e6:.2f} MB, median of {args.repeat}, single thread")
    rows = []
    for name in args.vocab or VOCABS:
        rows.extend(measure(name, text, args.repeat))
    print(table(rows, ["vocab", "engine", "MB/s", "x sentencepiece", "exact"]))
    return 1 if any(r.get("exact") is False for r in rows) else 0
