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

from labkit.bench.harness import (
    add_rates,
    corpus_lines,
    labkit_rows,
    ordinary_ids,
    reference_row,
    seconds_of,
    throughput_main,
    workload_megabytes,
)

VOCABS = ("botchan-unigram",)
COLUMNS = ["vocab", "engine", "MB/s", "x sentencepiece", "x sp same output", "exact"]
# each line encoded alone, so ids-only work comes first
PLAN = (("cold", "encode_ordinary"), ("warm", "encode_ordinary"), ("warm", "encode"))


def workload(megabytes: float) -> list[str]:
    """botchan's non-empty lines, repeated to about ``megabytes`` MB of UTF-8.

    Example: ``len(workload(0.1))`` -> about 1,500 lines
    """
    lines = corpus_lines()
    size = sum(len(line.encode("utf-8")) for line in lines)
    copies = max(1, round(megabytes * 1_000_000 / size))
    return lines * copies


def _described_workload(megabytes: float) -> tuple[list[str], str]:
    lines = workload(megabytes)
    return lines, f"workload: {len(lines):,} botchan lines, {workload_megabytes(lines):.2f} MB, each encoded alone"


def measure(name: str, lines: list[str], repeat: int = 3) -> list[dict]:
    """Rows of MB/s for one Unigram vocabulary (labkit cold/warm, sentencepiece, tokenizers).

    Example:
        >>> from labkit.bench.unigram import measure, workload
        >>> # a benchmark (seconds of timing runs), so not executed as a test
        >>> measure("botchan-unigram", workload(0.05), repeat=1)[0]["engine"]  # doctest: +SKIP
        'labkit cold encode_ordinary'
    """
    import labkit

    tok = labkit.load(name, engine="labkit")
    sp = labkit.load(name, engine="sentencepiece").backend
    rows = labkit_rows(tok, lines, repeat, vocab=name, plan=PLAN)
    expected = ordinary_ids(tok, lines)
    rows.append(reference_row(name, "sentencepiece encode (ids)", sp.encode, lines, repeat, expected=expected))
    rows.append(reference_row(name, "sentencepiece encode (ids + offsets)",
                              lambda line: sp.encode(line, out_type="offset_mapping", return_bytes=False), lines, repeat))
    try:
        hf = labkit.load(name, engine="hf").backend
    except labkit.LabkitError:
        hf = None
    if hf is not None:
        rows.append(reference_row(name, "tokenizers encode", lambda line: hf.encode(line, add_special_tokens=False), lines,
                                  repeat, expected=expected, ids=lambda e: e.ids))
    add_rates(rows, workload_megabytes(lines), {"x sentencepiece": "sentencepiece encode (ids)"})
    base = seconds_of(rows, "sentencepiece encode (ids)")
    with_offsets = seconds_of(rows, "sentencepiece encode (ids + offsets)")
    for row in rows:
        # an Encoding carries offsets: compare it with sentencepiece producing offsets too
        same = with_offsets if row["engine"] in ("labkit warm encode", "tokenizers encode") else base
        row["x sp same output"] = same / row["seconds"]
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit status 1 if a reference (or labkit's encode) disagrees with labkit's ids."""
    return throughput_main(argv, suite="unigram", doc=__doc__, vocabs=VOCABS, measure=measure, columns=COLUMNS,
                           workload=_described_workload)
