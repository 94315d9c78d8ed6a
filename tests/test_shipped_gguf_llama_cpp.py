"""The four bundled GGUFs against llama.cpp's stored answers on random texts and id lists
(labkit.conformance.shipped_gguf): every engine that serves a file is exact, but for the two
documented choices, and each choice is exactly what it says."""
from __future__ import annotations

import functools

import pytest

import labkit
from labkit.conformance import shipped_gguf as sg


@functools.lru_cache(maxsize=None)
def reference() -> dict:
    return sg.load_reference()


@functools.lru_cache(maxsize=None)
def case(name: str) -> dict:
    return sg.case_of(name)


@pytest.mark.parametrize("engine", sg.ENGINES)
@pytest.mark.parametrize("name", sg.NAMES)
def test_every_engine_that_serves_a_bundled_gguf_is_llama_cpps(name, engine):
    result = sg.check(name, engine, reference()[name], case(name))
    assert result.startswith(("exact", "refused")), result
    if result.startswith("refused"):
        assert "engines that can: labkit" in result


def test_labkit_serves_all_four_and_the_documented_choices_are_met():
    results = {name: sg.check(name, "labkit", reference()[name], case(name)) for name in sg.NAMES}
    assert results["llama-spm"] == results["bert-bge"] == "exact"
    assert results["gpt2"].startswith("exact, ") and "decode as documented" in results["gpt2"]
    assert results["qwen2"].startswith("exact, ") and "ids as documented" in results["qwen2"]


def test_the_clean_spaces_choice_is_only_llama_detokenizes_pass():
    # llama.cpp's llama_detokenize drops the space before '.' and ',' on gpt2; labkit joins the pieces
    tok = labkit.load("gpt2")
    ids = tok.encode("Hello , world .").ids
    index = case("gpt2")["id_lists"].index(ids)
    assert reference()["gpt2"]["keep"][index] == "Hello, world."
    assert tok.decode(ids) == "Hello , world ."
    assert sg._documented("gpt2", "decode", ids, "Hello , world .", "Hello, world.")
    assert not sg._documented("gpt2", "decode", ids, "Hello , world !", "Hello, world.")
    assert not sg._documented("bert-bge", "decode", ids, "Hello , world .", "Hello, world.")


def test_the_nfc_choice_covers_only_texts_nfc_changes():
    assert sg._documented("qwen2", "ids", "e\u0301", "1", "2")
    assert not sg._documented("qwen2", "ids", "\u00e9", "1", "2")  # already NFC: a difference would be a bug
    assert not sg._documented("gpt2", "ids", "e\u0301", "1", "2")


def test_a_changed_draw_is_refused_not_compared():
    drawn = dict(case("gpt2"), texts=case("gpt2")["texts"][:-1])
    drawn["inputs_sha256"] = "0" * 64
    with pytest.raises(RuntimeError, match="remake"):
        sg.check("gpt2", "labkit", reference()["gpt2"], drawn)


def test_a_vocab_read_once_gives_the_loads_answers():
    # notebook 14 reads each file once and builds every engine from it: the same exact/refused
    vocab = sg_read("gpt2")
    for engine in sg.ENGINES:
        by_load = sg.check("gpt2", engine, reference()["gpt2"], case("gpt2"))
        by_build = sg.check("gpt2", engine, reference()["gpt2"], case("gpt2"), vocab)
        assert by_load.split(":")[0] == by_build.split(":")[0], engine
        assert ("engines that can" in by_build) is False


def sg_read(name: str):
    from labkit.formats.detect import read_vocab
    from labkit.paths import bundled_path
    return read_vocab(bundled_path(name))
