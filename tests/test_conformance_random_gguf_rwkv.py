"""RWKV GGUF files (tokenizer.ggml.model "rwkv") as llama.cpp serves them: 100 random files
against llama.cpp's stored answers (labkit.conformance.random_gguf_rwkv), and one small file
per rule with llama.cpp's own answer."""
from __future__ import annotations

from collections import Counter

import pytest

import labkit
from support import random_gguf as random_gguf_answers
from support.llama_cpp import llama_cpp_ids as ids
from labkit.algorithms import rwkv_trie
from labkit.conformance import random_gguf as rg
from labkit.conformance import random_gguf_rwkv as rgr

BYTES = [f"\\x{b:02x}" for b in range(256)]


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("rwkv")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("rwkv")


def test_labkit_gives_llama_cpps_answers_on_every_file(outcomes):
    assert Counter(r["labkit"] for r in outcomes.values()) == {"exact": len(rgr.SEEDS)}


@pytest.mark.parametrize("engine", ["hf", "sentencepiece", "tiktoken"])
def test_reference_engines_refuse_every_rwkv_gguf(outcomes, engine):
    assert all(r[engine].startswith("refused") and "rwkv" in r[engine] for r in outcomes.values())


def test_the_draws_cover_every_rule(reference):
    drawn = [rgr.draw_file(s) for s in rgr.SEEDS]
    hows = " ".join(d.how for d in drawn)
    for rule in ("bytes all", "bytes some", "an escape twice", "upper-case hex"):
        assert rule in hows, rule
    assert {k for d in drawn for k in d.types} == {1, 3, 4, 5}
    assert {f for d in drawn for f in d.flags} == set(rgr.FLAGS)
    served = list(reference.values())
    assert any(x is not None for e in served for x in e["skip"])  # a hidden control token somewhere


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # the shortest token instead of the longest is not llama.cpp's walk
    def shortest(self, data):
        out, position = [], 0
        while position < len(data):
            end = next(k for k in range(position + 1, len(data) + 1) if data[position:k] in self.token_id)
            out.append((self.token_id[data[position:end]], position, end))
            position = end
        return out

    monkeypatch.setattr(rwkv_trie.RwkvMatcher, "pieces", shortest)
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",), family="rwkv")["labkit"]
               for seed in range(0, 6) if "bytes all" in rgr.draw_file(seed).how]
    assert results and all(r.startswith("differs") for r in results), results


# ----------------------------------------------------------------------------- one rule, one file
# each expected value is what llama.cpp (llama-cpp-python 0.3.36, llama.cpp 0c1e5709) gave for the same file


def toy(folder, seed, tokens, types, flags=None, header=None):
    return labkit.load(rgr.write_file(rgr.DrawnRwkvGguf(seed, tokens, types, flags or {}, header or {}), folder),
                       engine="labkit")


def test_longest_match_later_spelling_wins_hex_read_as_llama_cpp_and_no_bos(tmp_path):
    tokens = ["<s>", *BYTES, "ab", "\\x61\\x62", "abc", "\\xC3"]
    tok = toy(tmp_path, 20, tokens, [3] + [1] * 260, {"add_bos_token": True, "add_eos_token": True}, {"bos": 0, "eos": 0})
    assert ids(tok, "abcab") == [259, 258] and ids(tok, "abcab", add=True) == [259, 258]  # 258, not 257: the later 'ab'
    assert ids(tok, "ab\u00e9") == [258, 196, 170] and ids(tok, "x") == [121]
    assert tok.decode([0, 260, 257, 259]) == "<s>3ababc"  # '\\xC3' reads as '3' there
    assert tok.decode([0, 260, 257, 259], skip_special_tokens=True) == "3ababc"


def test_vocabularies_llama_cpp_cannot_run_are_refused_at_load(tmp_path):
    no_q = [t for t in BYTES if t != "\\x71"]
    # llama.cpp: "qz" gives [256]; "qa" never returns (it goes back to the start of the text)
    with pytest.raises(labkit.LabkitError, match="0x71 starts the token b'qz' but is no token"):
        toy(tmp_path, 21, ["<s>", *no_q, "qz"], [3] + [1] * 256, header={"unknown": 0})
    # llama.cpp: "aq" gives [98, -1]
    with pytest.raises(labkit.LabkitError, match="0x71 starts no token and there is no unknown id"):
        toy(tmp_path, 22, ["<s>", *no_q], [3] + [1] * 255)
    tok = toy(tmp_path, 23, ["<s>", *no_q], [3] + [1] * 255, header={"unknown": 0})
    assert ids(tok, "aq") == [98, 0]
