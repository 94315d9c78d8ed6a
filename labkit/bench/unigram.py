"""``python -m labkit.bench unigram``: Unigram speed and exactness, labkit vs the libraries
called directly, on whole texts and line by line, in one run.

Three texts (:mod:`labkit.bench.texts`, shared with the other suites): botchan.txt, a
non-repetitive mixed-script text and a Chinese one, each about ``--mb`` MB. For each, *whole* encodes the text as one
string and *lines* encodes each line alone. Timed: labkit ids (``encode_ordinary``) warm
(word cache filled by an untimed run) and cold (cache emptied first), labkit's ``encode``
(a full Encoding, warm), sentencepiece's ``SentencePieceProcessor.encode`` (ids) called
directly, labkit's ``sentencepiece`` engine (the wrapper, ``encode(...).ids``) and ``tokenizers``' ``encode``
called directly. Each timing is CPU time (``time.process_time``), the median of
``--repeat`` rounds in which every engine runs once, in turn (A/B interleaved). ``x sp``
is sentencepiece's time over labkit's warm ids time, ``x sp wrapper`` the same against
the wrapper, ``x hf`` against tokenizers; ``diff sp`` counts labkit ids that differ from
sentencepiece's and ``diff hf`` labkit's double-sum model against tokenizers (both must be
0). Then: load times, and the slope of labkit's warm time against text length (log-log, on
1/8, 1/4, 1/2 and all of the longest text; 1.0 is linear).

The per-line table of earlier versions stays available as :func:`measure` (notebook 05).
Introduced in notebook ``05_unigram_trie_viterbi``.

From a shell: ``python -m labkit.bench unigram --mb 0.3 --repeat 5``
"""
from __future__ import annotations

import argparse
import math
import os

from labkit.algorithms.unigram import split_words
from labkit.bench.compare import interleaved
from labkit.bench.harness import (
    add_rates,
    corpus_lines,
    labkit_rows,
    ordinary_ids,
    reference_row,
    seconds_of,
    single_thread,
    table,
    tokenizers_backend,
    workload_megabytes,
)

VOCABS = ("botchan-unigram",)
COLUMNS = ["vocab", "engine", "MB/s", "x sentencepiece", "x sp same output", "exact"]
# each line encoded alone, so ids-only work comes first
PLAN = (("cold", "encode_ordinary"), ("warm", "encode_ordinary"), ("warm", "encode"))


def workload(megabytes: float) -> list[str]:
    """botchan's non-empty lines, repeated to about ``megabytes`` MB of UTF-8.

    Example:
        >>> from labkit.bench.unigram import workload
        >>> len(workload(0.1))
        4288
    """
    lines = corpus_lines()
    size = sum(len(line.encode("utf-8")) for line in lines)
    copies = max(1, round(megabytes * 1_000_000 / size))
    return lines * copies


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
        hf = tokenizers_backend(name)
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


TEXT_COLUMNS = ["text", "mode", "chars", "labkit warm ms", "labkit cold ms", "labkit Encoding ms", "sp ms",
                "sp wrapper ms", "hf ms", "x sp", "x sp cold", "x sp wrapper", "x hf", "diff sp", "diff hf"]


def _differing(got: list, expected: list) -> int:
    """How many positions differ (a length difference counts as that many)."""
    return sum(a != b for a, b in zip(got, expected)) + abs(len(got) - len(expected))


def measure_texts(name: str = "botchan-unigram", max_chars: int = 300_000, repeat: int = 5,
                  texts: dict[str, str] | None = None) -> list[dict]:
    """One row per (text, whole/lines): CPU milliseconds, ratios and differing ids (see the
    module docstring). ``texts`` ({name: text}) defaults to the three bench texts of ``max_chars``.

    Example (two lines of text; no id differs from either reference):
        >>> rows = measure_texts(repeat=1, texts={"two lines": "Hello world.\\nIt was a fine day."})
        >>> [row["mode"] for row in rows], [row["diff sp"] + row["diff hf"] for row in rows]
        (['whole', 'lines'], [0, 0])
    """
    import labkit
    from labkit.algorithms.unigram import UnigramModel
    from labkit.algorithms.unigram_words import WordCache
    from labkit.bench.texts import bench_texts

    tok = labkit.load(name, engine="labkit")
    wrapper = labkit.load(name, engine="sentencepiece")
    sp = wrapper.backend
    hf = tokenizers_backend(name)
    vocab = tok.vocab
    double = WordCache(UnigramModel(vocab.tokens, vocab.scores, vocab.token_types, sentencepiece=False))
    rows = []
    for text_name, text in (texts if texts is not None else bench_texts(max_chars / 1e6)).items():
        for mode in ("whole", "lines"):
            work: list[str] = [text] if mode == "whole" else [line for line in text.split("\n") if line.strip()]

            def cold(work=work):
                tok.clear_cache()
                return [tok.encode_ordinary(t) for t in work]

            calls = {
                "labkit warm": lambda work=work: [tok.encode_ordinary(t) for t in work],
                "labkit cold": cold,
                "labkit Encoding": lambda work=work: [tok.encode(t, parse_special=False) for t in work],
                "sp": lambda work=work: [sp.encode(t) for t in work],
                "sp wrapper": lambda work=work: [wrapper.encode(t, parse_special=False).ids for t in work],
                "hf": lambda work=work: [hf.encode(t, add_special_tokens=False) for t in work],
            }
            got = calls["labkit warm"]()  # fills the cache; also the ids checked below
            expected = calls["sp"]()
            hf_ids = [e.ids for e in calls["hf"]()]
            double_ids = [double.ids(split_words(tok.normalize(t))) for t in work]
            seconds = interleaved(calls, repeat)
            row = {"text": text_name, "mode": mode, "chars": len(text)}
            for engine, value in seconds.items():
                row[f"{engine} ms"] = value * 1000
            row["x sp"] = seconds["sp"] / seconds["labkit warm"]
            row["x sp cold"] = seconds["sp"] / seconds["labkit cold"]
            row["x sp wrapper"] = seconds["sp wrapper"] / seconds["labkit warm"]
            row["x hf"] = seconds["hf"] / seconds["labkit warm"]
            row["diff sp"] = sum(_differing(a, b) for a, b in zip(got, expected))
            row["diff hf"] = sum(_differing(a, b) for a, b in zip(double_ids, hf_ids))
            rows.append(row)
    return rows


def load_seconds(name: str = "botchan-unigram", repeat: int = 5) -> dict[str, float]:
    """Median CPU seconds of ``labkit.load(name)`` per engine (after one untimed load each).

    Example:
        >>> sorted(load_seconds(repeat=1))
        ['hf', 'labkit', 'sentencepiece']
    """
    import labkit

    calls = {engine: (lambda engine=engine: labkit.load(name, engine=engine)) for engine in ("labkit", "sentencepiece")}
    calls["hf"] = lambda: tokenizers_backend(name)
    for call in calls.values():
        call()
    return interleaved(calls, repeat)


def length_slope(name: str = "botchan-unigram", max_chars: int = 300_000, repeat: int = 3,
                 text: str | None = None) -> tuple[float, list]:
    """(log-log slope, [(chars, warm seconds)]) of labkit's warm ids time on growing prefixes
    of ``text``, by default the mixed text of ``max_chars`` (1.0 means linear).

    Example (the slope on so little text says nothing; the prefixes are 1/8, 1/4, 1/2 and all of it):
        >>> slope, points = length_slope(repeat=1, text="It was a fine day. " * 40)
        >>> [chars for chars, _ in points]
        [95, 190, 380, 760]
    """
    import labkit
    from labkit.bench.texts import mixed_text

    tok = labkit.load(name, engine="labkit")
    if text is None:
        text = mixed_text(max_chars / 1e6)
    prefixes = [text[: len(text) * k // 8] for k in (1, 2, 4, 8)]
    for prefix in prefixes:
        tok.encode_ordinary(prefix)
    seconds = interleaved({len(p): (lambda p=p: tok.encode_ordinary(p)) for p in prefixes}, repeat)
    points = sorted(seconds.items())
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(t, 1e-9)) for _, t in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum((x - mean_x) ** 2 for x in xs)
    return slope, points


def main(argv: list[str] | None = None) -> int:
    """Print the tables; exit status 1 if labkit's ids differ from a reference anywhere."""
    parser = argparse.ArgumentParser(prog="python -m labkit.bench unigram", description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=0.3, help="each text about this many MB")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (median)")
    args = parser.parse_args(argv or [])
    single_thread()
    max_chars = max(1000, int(args.mb * 1_000_000))
    print(f"botchan-unigram; texts of about {args.mb} MB; CPU time, median of {args.repeat} interleaved rounds, "
          f"single thread; load average {os.getloadavg()[0]:.1f}")
    rows = measure_texts("botchan-unigram", max_chars, args.repeat)
    print(table(rows, TEXT_COLUMNS))
    loads = load_seconds("botchan-unigram", args.repeat)
    print("load (CPU s): " + ", ".join(f"{engine} {value:.3f}" for engine, value in loads.items()))
    slope, points = length_slope("botchan-unigram", max_chars, max(1, args.repeat // 2))
    print(f"warm time vs length (mixed text): slope {slope:.2f} over " + ", ".join(f"{n:,} chars {t * 1000:.1f} ms" for n, t in points))
    return 1 if any(row["diff sp"] or row["diff hf"] for row in rows) else 0
