"""Merge-trace views, the exercise checkers, and the engine under other pre-tokenizers."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings

import labkit
from labkit.algorithms import bpe
from labkit.engines import hf
from labkit.engines.labkit_bpe_byte import ByteLevelBPE
from labkit.exercises.bpe import check_bpe, check_first_merges, check_gpt2_char, check_pretokens, check_utf8_length
from labkit.formats.gguf import read_gguf
from labkit.paths import bundled_path
from labkit.viz.merges import MergeTable, parts_at, step_html
from support.texts import texts

OTHER_PRES = ("llama3", "gpt-4o", "deepseek-coder", "deepseek-llm", "starcoder", "falcon", "command-r", "qwen35")


@pytest.fixture(scope="module")
def trace():
    ranks = {(b"l", b"o"): 0, (b"lo", b"w"): 1, (b" ", b"low"): 2}
    t = bpe.MergeTrace()
    bpe.bpe_heap(bpe.byte_parts(b" low"), bpe.pair_ranker(ranks), trace=t)
    return t


def test_merge_table_text_and_html(trace):
    table = MergeTable(trace)
    text = repr(table)
    assert text.splitlines()[0].split() == ["step", "left", "right", "rank", "merged", "id", "parts"]
    assert text.splitlines()[-1].split() == ["3", "Ġ", "low", "2", "Ġlow", "Ġlow"]
    html = table._repr_html_()
    assert html == MergeTable(trace)._repr_html_() and html.count("<tr>") == 1 + 1 + 3
    assert "Ġlow" in html and "id=" not in html


def test_parts_at_and_step_html(trace):
    assert parts_at(trace, 0) == (b" ", b"l", b"o", b"w") and parts_at(trace, 3) == trace.final == (b" low",)
    assert "rank 1" in step_html(trace, 2)
    with pytest.raises(labkit.LabkitError):
        parts_at(trace, 4)
    with pytest.raises(labkit.LabkitError):
        MergeTable("not a trace")  # type: ignore[arg-type]


def test_checkers_say_right_and_wrong(capsys):
    assert check_utf8_length("日", 3) and not check_utf8_length("日", 1)
    assert check_gpt2_char(0x20, "Ġ") and not check_gpt2_char(0x20, " ")
    assert check_pretokens("a 12", "qwen2", ["a", " ", "1", "2"]) and not check_pretokens("a 12", "qwen2", ["a", " 12"])
    assert check_bpe(b"low", {(b"l", b"o"): 0}, [b"lo", b"w"]) and not check_bpe(b"low", {(b"l", b"o"): 0}, [b"low"])
    assert check_first_merges(["aaab"], [(b"a", b"a")]) and not check_first_merges(["aaab"], [(b"a", b"b")])
    out = capsys.readouterr().out.splitlines()
    assert out.count("right") == 5 and sum(line.startswith("wrong: ") for line in out) == 5


@pytest.fixture(scope="module")
def pairs_by_pre():
    vocab = read_gguf(bundled_path("gpt2"))
    out = {}
    for pre in OTHER_PRES:
        v = dataclasses.replace(vocab, pre=pre)
        out[pre] = (ByteLevelBPE(v), hf.build(v))
    return out


@settings(max_examples=60, deadline=None)
@given(texts)
def test_engine_matches_tokenizers_under_other_pre_tokenizers(pairs_by_pre, text):
    # the GPT-2 vocabulary run with other models' splits, NFC and ignore_merges switches
    for pre, (tok, ref) in pairs_by_pre.items():
        assert tok.encode(text, parse_special=False).ids == ref.encode(text, parse_special=False).ids, pre
