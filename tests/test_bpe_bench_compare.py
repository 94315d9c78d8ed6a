"""labkit.bench.compare and labkit.bench.texts: rows carry both ratios (vs labkit's wrapper,
vs the library called directly) and exactness flags; the texts are deterministic. Timings are
never asserted."""
from __future__ import annotations

import pytest

from labkit.bench import compare, texts


def test_interleaved_takes_turns_and_reports_medians():
    order = []
    seconds = compare.interleaved({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, repeat=3)
    assert order == ["a", "b"] * 3 and set(seconds) == {"a", "b"} and all(v >= 0 for v in seconds.values())


def test_texts_are_deterministic_and_of_the_three_kinds():
    first, second = texts.bench_texts(0.01), texts.bench_texts(0.01)
    assert first == second and list(first) == list(texts.TEXTS)
    assert sum(1 for ch in first["chinese"] if "\u4e00" <= ch <= "\u9fff") > 0.8 * len(first["chinese"])
    mixed = first["mixed"]
    assert any("\u0400" <= ch <= "\u04ff" for ch in mixed) and any("\u4e00" <= ch <= "\u9fff" for ch in mixed)
    assert len(mixed.encode()) >= 10_000


@pytest.mark.parametrize("vocab, references, primary", [
    ("gpt2", [compare.TIKTOKEN, compare.TOKENIZERS], "tiktoken"),
    ("botchan-bpe", [compare.SENTENCEPIECE], "sentencepiece"),
    ("qwen2", [compare.TIKTOKEN], "tiktoken"),  # NFC-normalising: the direct call normalises first
])
def test_rows_carry_both_ratios_against_the_primary_reference(vocab, references, primary):
    text = texts.mixed_text(0.005)
    rows = compare.measure(vocab, "mixed", text, references, repeat=1)
    by_engine = {row["engine"]: row for row in rows}
    assert {"labkit cold encode", "labkit warm encode", "labkit decode",
            f"{primary} wrapper encode", f"{primary} direct encode"} <= set(by_engine)
    for row in rows:
        op = row["engine"].rsplit(" ", 1)[1]
        assert row["vs wrapper"] == pytest.approx(by_engine[f"{primary} wrapper {op}"]["seconds"] / row["seconds"])
        assert row["vs direct"] == pytest.approx(by_engine[f"{primary} direct {op}"]["seconds"] / row["seconds"])
    flagged = [row for row in rows if "exact" in row]
    assert len(flagged) == 2 * len(references) and all(row["exact"] for row in flagged)


def test_long_texts_have_no_whitespace_and_are_deterministic():
    first = texts.long_texts(0.002)
    assert first == texts.long_texts(0.002) and list(first) == list(texts.LONG_TEXTS)
    assert all(len(v) == 2000 and not any(ch.isspace() for ch in v) for v in first.values())
    assert set(first["digits"]) == set("0123456789") and set(first["letters"]) == set("abcdefghijklmnopqrstuvwxyz")
    assert list(texts.long_texts(0.001, ["word"])) == ["word"]


def test_long_suite_prints_both_ratios_for_each_reference(capsys):
    from labkit.bench import long

    status = long.main(["--mb", "0.002", "--repeat", "1", "--vocab", "llama-spm", "--text", "digits"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "load average" in out and "vs wrapper" in out and "vs direct" in out
    assert "sentencepiece direct encode" in out
    assert long.main(["--mb", "0.002", "--repeat", "1", "--vocab", "gpt2", "--text", "digits"]) == 0
    out = capsys.readouterr().out
    assert "tiktoken direct encode" in out and "tokenizers wrapper encode" in out
