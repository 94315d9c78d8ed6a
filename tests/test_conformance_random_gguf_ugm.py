"""Unigram GGUF files (tokenizer.ggml.model "t5") as llama.cpp serves them: 80 random files
against llama.cpp's stored answers (labkit.conformance.random_gguf_ugm), and one small file per
rule with llama.cpp's own answer."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import labkit
from support import random_gguf as random_gguf_answers
from support.llama_cpp import llama_cpp_ids as encoded
from labkit.algorithms.charsmap import SpmNormalizer
from labkit.conformance import random_gguf as rg
from labkit.conformance import random_gguf_ugm as rgu
from labkit.formats import gguf as gguf_reader


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("ugm")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("ugm")


def test_labkit_gives_llama_cpps_answers_or_refuses(outcomes):
    counts = Counter(r["labkit"].split(":")[0] for r in outcomes.values())
    assert counts["differs"] == 0, {s: r["labkit"] for s, r in outcomes.items() if r["labkit"].startswith("differs")}
    refusals = [r["labkit"] for r in outcomes.values() if r["labkit"].startswith("refused")]
    assert all("hash map's order" in r for r in refusals), refusals
    assert counts["exact"] >= 40, counts


@pytest.mark.parametrize("engine", ["hf", "sentencepiece", "tiktoken"])
def test_reference_engines_refuse_every_t5_gguf(outcomes, engine):
    results = {seed: r[engine] for seed, r in outcomes.items()}
    assert all(r.startswith("refused") for r in results.values()), results
    if engine == "sentencepiece":  # llama.cpp's t5 loop is its own: named, with the engine that serves it
        assert all("Unigram loop of its own" in r and "engine='labkit'" in r
                   for r in results.values() if "hash map's order" not in r), results


def test_the_sentencepiece_check_can_fail(reference, tmp_path, monkeypatch):
    # served, sentencepiece differs from llama.cpp's t5 loop on most files
    from labkit.engines import sentencepiece_engine

    monkeypatch.setattr(sentencepiece_engine, "gguf_differs", lambda vocab: None)
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("sentencepiece",), family="ugm")["sentencepiece"]
               for seed in range(0, 3)]
    assert all(r.startswith("differs") for r in results), results


def test_the_draws_and_answers_cover_every_rule(reference):
    served = [reference[s] for s in rgu.SEEDS if "refused" not in reference[s]]
    for mode in ("special", "bos_plain", "skip"):
        assert any(x is not None for e in served for x in e[mode]), mode
    drawn = [rgu.draw_file(s) for s in rgu.SEEDS]
    assert {k for d in drawn for k in d.types} == {1, 2, 3, 4, 5, 6}
    assert {d.how for d in drawn} == {"charsmap none", "charsmap bpe", "charsmap unigram"}


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # sentencepiece's default (a space prefix) is not llama.cpp's for t5
    real = gguf_reader._normalizer_and_options

    def with_prefix(*args, **kwargs):
        normalizer, options = real(*args, **kwargs)
        normalizer["add_dummy_prefix"] = True
        return normalizer, options

    monkeypatch.setattr(gguf_reader, "_normalizer_and_options", with_prefix)
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",), family="ugm")["labkit"]
               for seed in range(0, 10)]
    assert any(r.startswith("differs") for r in results)


# ----------------------------------------------------------------------------- one rule, one file

HEAD = [("<pad>", 0.0, 3), ("</s>", 0.0, 3), ("<unk>", 0.0, 2)]


def toy(folder: Path, seed: int, rows, flags=None) -> labkit.Tokenizer:
    tokens, scores, types = (list(column) for column in zip(*HEAD, *rows))
    return labkit.load(rgu.write_file(rgu.DrawnUgmGguf(seed, tokens, scores, types, None, flags or {}), folder),
                       engine="labkit")




# each expected value is what llama.cpp (llama-cpp-python 0.3.36, llama.cpp 0c1e5709) gave for the same file
def test_t5_defaults_stored_types_and_decoding(tmp_path):
    rows = [("a", -1.0, 1), ("b", -2.0, 1), ("ab", -2.5, 1), ("▁", -3.0, 1), ("▁a", -1.5, 1), ("<0xC3>", 0.0, 6),
            ("<|im_end|>", -1.0, 1)]
    tok = toy(tmp_path, 70, rows)
    assert encoded(tok, "ab") == [5] and encoded(tok, " ab") == [7, 4]  # no space prefix unless the file says so
    assert encoded(tok, "a  b") == [3, 6, 6, 4]  # nor extra-whitespace removal
    assert encoded(tok, "é") == [2] and encoded(tok, "abééb") == [5, 2, 4]  # no byte fallback: the unknown id 2
    # '<|im_end|>' becomes a control token at load, after llama.cpp built its lattice from the stored types
    assert encoded(tok, "a<|im_end|>") == [3, 9]
    assert encoded(tok, "ab", add=True) == [5, 1]  # t5 adds EOS (id 1) by default
    assert [tok.decode(x) for x in ([3, 6, 7], [7, 3], [1, 3, 8], [0, 2, 3])] == ["a  a", " aa", "</s>a\ufffd",
                                                                                  "<pad><unk>a"]
    assert [tok.decode(x, skip_special_tokens=True) for x in ([1, 3, 8], [0, 2, 3])] == ["a\ufffd", "a"]


def test_add_bos_without_a_bos_id_is_refused_as_llama_cpp_aborts(tmp_path):
    tok = toy(tmp_path, 72, [("a", -1.0, 1)], {"add_bos_token": True})
    assert encoded(tok, "a") == [3] and encoded(tok, "a", add=True) == "abort"


def test_a_user_defined_token_llama_cpp_half_matches_splits_a_character(tmp_path):
    # 'ü' (C3 BC) and 'áb' (C3 A1 62) share their first byte: the trie walks C3, stops, and the
    # normaliser copies that one byte, so llama.cpp gives 'ü' -> [2] although 'ü' is a token
    tok = toy(tmp_path, 71, [("ü", -1.0, 1), ("áb", 0.0, 4), ("x", -1.0, 1)])
    assert [encoded(tok, t) for t in ("ü", "áb", "xüx", "áx", "ábü", "xáüb")] == [[2], [4], [5, 2, 5], [2, 5], [4, 2], [5, 2]]


def test_llama_cpp_steps_through_a_split_character_by_its_lead_byte(tmp_path, monkeypatch):
    # '<木>' after the walk: '<' E6 (copied), then U+FFFD for each of 9C A8; E6 takes the next two
    # bytes as one step, BD is a step alone, and the second U+FFFD is a whole one the token '\ufffd' matches
    rows = [("a", -1.0, 1), ("é", -2.0, 1), ("\ufffd", -1.0, 1), ("<東>", 0.0, 4), ("東", -1.0, 1), ("木", -1.0, 1),
            ("▁", -0.5, 1), ("🙂x", 0.0, 4), ("🙃", -1.0, 1)]
    tok = toy(tmp_path, 73, rows, {"add_space_prefix": True, "remove_extra_whitespaces": True})
    texts = ["<東>", "<木>", "a<木>a", "<東", "東木", "🙂x", "🙃x", "🙂y", "a 🙃 é", "<東木>", "<é>"]
    llama_cpp = [[6], [9, 2, 5, 2], [9, 3, 2, 5, 2, 3], [9, 2, 7], [9, 7, 8], [10], [9, 2], [9, 2], [9, 3, 9, 2, 9, 4],
                 [9, 2, 7, 8, 2], [9, 2, 4, 2]]
    assert [encoded(tok, t) for t in texts] == llama_cpp
    assert tok.encode("a<木>a", parse_special=False).offsets == [(0, 0), (0, 1), (1, 3), (2, 3), (3, 4), (4, 5)]
    # the str path decodes the split bytes as three U+FFFD and matches the token on each
    monkeypatch.setattr(SpmNormalizer, "may_split_chars", lambda self, text: False)
    assert encoded(tok, "<木>") == [9, 2, 5, 5, 5, 2]


def test_a_user_defined_token_made_control_at_load_keeps_score_zero_in_the_lattice(tmp_path):
    # llama.cpp adds the control bit to '<end_of_turn>' and keeps the user-defined one: with
    # parse_special off the token is not split off, and the lattice still scores it 0, not -30
    rows = [("<end_of_turn>", -30.0, 4), ("<", -1.0, 1), ("end_of_turn>", -2.0, 1), ("x", -1.0, 1), ("<x>", -40.0, 4)]
    tok = toy(tmp_path, 74, rows)
    texts = ["<end_of_turn>", "x<end_of_turn>x", "<x>", "<x><end_of_turn>"]
    assert [encoded(tok, t) for t in texts] == [[3], [6, 3, 6], [7], [7, 3]]
    assert tok.vocab.token_types[3] == 3 and tok.encode("<end_of_turn>").ids == [3]  # control: split off with parse_special
