"""The throughput suites' shared skeleton (labkit/bench/harness.py) and the four suites on it:
rows, their order and columns, exactness flags, ratios, exit status. Timings are never asserted."""
from __future__ import annotations

import pytest

from labkit.bench import bpe, harness, spm, unigram, wordpiece
from labkit.bench.harness import corpus_lines

LINES = corpus_lines()[:200]
TEXT = "\n".join(LINES)

# each suite's rows, in order, as its notebook shows them
SUITE_ROWS = {
    "bpe": (bpe, "gpt2", TEXT, "x tokenizers", ["labkit cold encode", "labkit warm encode", "labkit warm encode_ordinary",
                                                "tokenizers encode", "tiktoken encode_ordinary"]),
    "spm": (spm, "botchan-bpe", TEXT, "x sentencepiece", ["labkit cold encode", "labkit warm encode",
                                                          "labkit warm encode_ordinary", "sentencepiece encode (ids)",
                                                          "tokenizers encode"]),
    "wordpiece": (wordpiece, "minilm", TEXT, "x tokenizers", ["labkit cold encode", "labkit warm encode",
                                                                "labkit warm encode_ordinary", "tokenizers encode"]),
    "unigram": (unigram, "botchan-unigram", LINES, "x sentencepiece",
                ["labkit cold encode_ordinary", "labkit warm encode_ordinary", "labkit warm encode",
                 "sentencepiece encode (ids)", "sentencepiece encode (ids + offsets)", "tokenizers encode"]),
}


@pytest.mark.parametrize("suite", list(SUITE_ROWS))
def test_suite_rows(suite):
    module, name, work, ratio, engines = SUITE_ROWS[suite]
    rows = module.measure(name, work, repeat=1)
    assert [r["engine"] for r in rows] == engines
    assert all(r["vocab"] == name and r["seconds"] > 0 and r["MB/s"] > 0 and ratio in r for r in rows)
    # every reference and labkit's warm encode carry an exactness flag, and all agree
    # (sentencepiece with offsets is timed for comparison only)
    flagged = [r["engine"] for r in rows if "exact" in r]
    assert sorted(flagged) == sorted(["labkit warm encode", *(e for e in engines if not e.startswith("labkit") and "offsets" not in e)])
    assert all(r["exact"] for r in rows if "exact" in r)
    # the ratio column is the base engine's time over the row's
    base = next(r for r in rows if r[ratio] == 1.0)
    assert all(r[ratio] == pytest.approx(base["seconds"] / r["seconds"]) for r in rows)
    assert set(module.COLUMNS) >= {"vocab", "engine", "MB/s", ratio, "exact"}


def test_unigram_same_output_ratio():
    rows = unigram.measure("botchan-unigram", LINES[:50], repeat=1)
    seconds = {r["engine"]: r["seconds"] for r in rows}
    by_engine = {r["engine"]: r for r in rows}
    assert by_engine["labkit warm encode"]["x sp same output"] == pytest.approx(
        seconds["sentencepiece encode (ids + offsets)"] / seconds["labkit warm encode"])
    assert by_engine["labkit warm encode_ordinary"]["x sp same output"] == pytest.approx(
        seconds["sentencepiece encode (ids)"] / seconds["labkit warm encode_ordinary"])


class CountingTokenizer:
    """A stand-in with the methods labkit_rows calls, counting cache clears."""

    def __init__(self):
        self.clears = 0

    def clear_cache(self):
        self.clears += 1

    def encode(self, text, parse_special=True):
        class Enc:
            ids = [len(text)]
        return Enc()

    def encode_ordinary(self, text):
        return [len(text)]


def test_labkit_rows_clear_the_cache_only_when_cold():
    tok = CountingTokenizer()
    rows = harness.labkit_rows(tok, ["ab", "c"], 3, vocab="toy")
    assert [r["engine"] for r in rows] == ["labkit cold encode", "labkit warm encode", "labkit warm encode_ordinary"]
    assert tok.clears == 3 and rows[1]["exact"] is True and "exact" not in rows[0]


def test_over_and_reference_row():
    assert harness.over(len, "abc")() == 3
    assert harness.over(len, ["ab", "c"])() == [2, 1]
    row = harness.reference_row("toy", "ref", lambda t: [len(t)], ["ab", "c"], 1, expected=[[2], [1]])
    assert row["exact"] is True
    row = harness.reference_row("toy", "ref", lambda t: [0], "abc", 1, expected=[3])
    assert row["exact"] is False
    assert "exact" not in harness.reference_row("toy", "ref", len, "abc", 1)
    assert harness.workload_megabytes(["é", "a"]) == harness.workload_megabytes("éa") == 3e-6


def test_bench_all_help_lists_the_suites_and_runs_none(capsys):
    """``labkit bench all --help`` describes ``all`` (its suites), not the first suite's options."""
    from labkit.bench import SUITES, main
    with pytest.raises(SystemExit) as stop:
        main(["all", "--help"], prog="labkit bench")
    out = capsys.readouterr().out
    assert stop.value.code == 0
    assert out.startswith("usage: labkit bench") and "== bpe" not in out
    assert all(name in out for name in SUITES)


def test_bench_suite_help_is_the_suites_own(capsys):
    from labkit.bench import main
    with pytest.raises(SystemExit) as stop:
        main(["bpe", "--help"], prog="labkit bench")
    assert stop.value.code == 0
    assert "usage: labkit bench bpe" in capsys.readouterr().out
