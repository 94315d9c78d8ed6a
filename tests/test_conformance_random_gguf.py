"""GGUF files as llama.cpp reads them: the load-time rules it applies by spelling, its way of
finding added tokens, its decoding; on 150 random byte-level GGUFs against llama.cpp's stored
answers (labkit.conformance.random_gguf), and one file per rule with llama.cpp's own answer."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labkit
from support import random_gguf as random_gguf_answers
from labkit.algorithms.bytes_unicode import bytes_to_unicode
from labkit.conformance import random_gguf as rg
from labkit.conformance.gguf_pretypes import write_byte_level_gguf
from labkit.formats import gguf_attributes

SEEDS = range(0, 150)


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("byte")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("byte")


def test_no_engine_differs_from_llama_cpp(outcomes):
    differing = {(seed, engine): result for seed, results in outcomes.items()
                 for engine, result in results.items() if result.startswith("differs")}
    assert differing == {}


def test_labkit_serves_what_llama_cpp_serves_and_refuses_what_it_cannot_load(outcomes, reference):
    for seed, results in outcomes.items():
        if "refused" in reference[seed]:
            assert results["labkit"].startswith("refused") and "Phi-3" in results["labkit"], seed
        elif results["labkit"] != "exact":
            # the one file llama.cpp loads that labkit refuses: its answer depends on a hash map's order
            assert "hash map's order" in results["labkit"], (seed, results["labkit"])
    counts = Counter(r["labkit"].split(":")[0] for r in outcomes.values())
    assert counts["exact"] >= 130, counts
    hf_refusals = [r["hf"] for r in outcomes.values() if r["hf"].startswith("refused")]
    assert hf_refusals and all("llama.cpp" in why for why in hf_refusals)


@pytest.mark.parametrize("engine", ["hf", "tiktoken", "sentencepiece"])
def test_reference_engines_give_llama_cpps_answers_or_refuse_at_load(outcomes, reference, engine):
    results = {seed: r[engine] for seed, r in outcomes.items()}
    assert {s: r for s, r in results.items() if r.startswith("differs")} == {}
    if engine == "tiktoken":
        assert sum(r == "exact" for r in results.values()) >= 20, results  # served where it can be exact
        # a file llama.cpp loads (and labkit does not refuse for every engine) is refused naming the
        # engine that serves it as llama.cpp does
        assert all("engine='labkit'" in r or "engines that can: labkit" in r for s, r in results.items()
                   if r.startswith("refused") and "refused" not in reference[s] and "hash map's order" not in r)


def test_the_tiktoken_check_can_fail(reference, tmp_path, monkeypatch):
    # without the GGUF checks, tiktoken serves files it decodes (an unused token) or splits otherwise
    from labkit.engines import tiktoken_engine

    monkeypatch.setattr(tiktoken_engine, "_gguf_differs", lambda *args: None)
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("tiktoken",))["tiktoken"] for seed in (11, 30, 75)]
    assert all(r.startswith("differs") for r in results), results


def test_the_draws_cover_every_rule(reference):
    drawn = [rg.draw_file(seed) for seed in SEEDS]
    extra = [(t, k) for d in drawn for t, k in zip(d.tokens, d.types) if t in rg.POOL]
    assert {k for _, k in extra} >= {1, 3, 4, 5}
    spellings = {t for t, _ in extra}
    assert spellings & gguf_attributes.EOG_SPELLINGS and spellings & gguf_attributes.HARMONY_USER_DEFINED
    assert spellings & {s for v in gguf_attributes.FIM_SPELLINGS.values() for s in v}
    assert len({d.pre for d in drawn}) >= 30
    phi3 = [d.seed for d in drawn if d.name == "Phi-3 mini"]
    assert any("refused" in reference[s] for s in phi3) and any("refused" not in reference[s] for s in phi3)
    served = [reference[s] for s in SEEDS if "refused" not in reference[s]]
    assert any(any(x is not None for x in e["special"]) for e in served)  # parse_special changes some ids
    assert any(any(x is not None for x in e["skip"]) for e in served)  # hiding specials changes some texts


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # without the end-of-generation rule, a user-defined <|im_end|> would be matched as text is not
    monkeypatch.setattr(gguf_attributes, "EOG_SPELLINGS", frozenset())
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",))["labkit"] for seed in range(0, 60)]
    assert any(r.startswith("differs") for r in results)


# ----------------------------------------------------------------------------- one rule, one file

BYTES = [bytes_to_unicode()[b] for b in range(256)]


def write_gguf(path: Path, pre: str, extra=(), retyped=None, name=None) -> Path:
    """The 256 byte tokens (ids = byte order in the GPT-2 alphabet), ``extra`` tokens from id 256,
    then 'qz' with its one merge (llama.cpp wants a merges array)."""
    tokens, types = list(BYTES), [1] * 256
    for ch, kind in (retyped or {}).items():
        types[tokens.index(ch)] = kind
    for spelling, kind in extra:
        tokens.append(spelling)
        types.append(kind)
    tokens.append("qz")
    types.append(1)
    return write_byte_level_gguf(path, tokens, types, ["q z"], pre, name=name)


# each expected value is what llama.cpp (llama-cpp-python 0.3.36) gave for the same file
def test_a_user_defined_end_of_turn_token_is_a_control_token(tmp_path):
    tok = labkit.load(write_gguf(tmp_path / "t.gguf", "gpt-2", [("<|im_end|>", 4)]), engine="labkit")
    assert tok.encode("a<|im_end|>b", parse_special=False).ids == [97, 60, 124, 105, 109, 95, 101, 110, 100, 124, 62, 98]
    assert tok.encode("a<|im_end|>b", parse_special=True).ids == [97, 256, 98]
    assert (tok.decode([256]), tok.decode([256], skip_special_tokens=True)) == ("<|im_end|>", "")


def test_gpt_oss_channel_token_is_user_defined_whatever_its_type(tmp_path):
    tok = labkit.load(write_gguf(tmp_path / "t.gguf", "gpt-2", [("<|channel|>", 3)]), engine="labkit")
    assert tok.encode("a<|channel|>b", parse_special=False).ids == [97, 256, 98]
    assert tok.decode([256], skip_special_tokens=True) == "<|channel|>"


def test_a_byte_with_no_token_stays_a_symbol_while_merging_and_is_dropped_after(tmp_path):
    # no token for 'ĺ' (0x98, the third byte of 😀) nor 'A': llama.cpp does not merge 'Ł' and 'Ģ'
    # across 'ĺ' (tokenizers drops 'ĺ' first and does); seed 3168 of random_gguf found it
    alphabet = [ch for b, ch in enumerate(BYTES) if b not in (0x98, 0x41)]
    merges = ["Ł Ģ", "ð Ł", "a b", "Ġ Ġ", "Ġ a", "c d"]
    path = write_byte_level_gguf(tmp_path / "t.gguf", [*alphabet, "ŁĢ", "ðŁ", "ab", "ĠĠ", "Ġa", "cd"],
                                 [1] * 260, merges, "gpt-2")
    texts = ["😀", "ab😀ab", "AbA", "    x", "cd! cd", "A", "x\u0098y", "     ", "Ab"]
    llama_cpp = [[255, 127], [256, 255, 127, 256], [97], [257, 32, 32, 119], [259, 33, 32, 259], [], [119, 192, 120],
                 [257, 257, 32], [97]]
    tok = labkit.load(path, engine="labkit")
    assert [tok.encode(t, parse_special=False).ids for t in texts] == llama_cpp
    assert tok.encode("ab😀ab", parse_special=False).offsets == [(0, 2), (2, 3), (2, 3), (3, 5)]
    with pytest.raises(labkit.LabkitError, match="byte 0x41 has no token"):
        labkit.load(path, engine="hf")  # tokenizers would merge 'ŁĢ': [238, 254] for '😀'
    # a long pre-token with such a byte: the same ids, and its spans are not kept in the word cache
    long_word = "😀" * 300  # one pre-token of 1,200 bytes
    encoding = tok.encode(long_word, parse_special=False)
    assert encoding.ids == [255, 127] * 300 and encoding.offsets == [(k // 2, k // 2 + 1) for k in range(600)]
    assert long_word not in tok._cache  # the spans (read above) are made, not kept


def test_a_control_token_spelled_as_a_word_is_found_whole(tmp_path):
    tok = labkit.load(write_gguf(tmp_path / "t.gguf", "llama3", [("ab", 3)]), engine="labkit")
    assert tok.encode("ab", parse_special=False).ids == [256]
    assert tok.encode("xab", parse_special=False).ids == [120, 97, 98]


def test_an_unused_token_is_still_made_and_decodes_to_nothing(tmp_path):
    tok = labkit.load(write_gguf(tmp_path / "t.gguf", "gpt-2", retyped={"a": 5}), engine="labkit")
    assert tok.encode("aa").ids == [97, 97]
    assert (tok.decode([97]), tok.decode([97, 98])) == ("", "b")


def test_a_token_outside_the_byte_alphabet_decodes_to_llama_cpps_marker(tmp_path):
    tok = labkit.load(write_gguf(tmp_path / "t.gguf", "gpt-2", [("a\u2581", 1)]), engine="labkit")
    assert tok.decode([256]) == "a[UNK_BYTE_0xe29681a\u2581]"


def test_added_tokens_are_found_longest_first(tmp_path):
    path = write_gguf(tmp_path / "t.gguf", "gpt-2", [("ab", 4), ("bcd", 4)])
    tok = labkit.load(path, engine="labkit")
    assert tok.encode("abcd").ids == [97, 257] and tok.encode("abcab").ids == [256, 99, 256]
    with pytest.raises(labkit.LabkitError, match="overlap in part"):
        labkit.load(path, engine="hf")


def test_phi3_specials_swallow_ascii_spaces_after_them(tmp_path):
    extra = [("</s>", 3), ("<unk>", 3), ("<s>", 3), ("<|endoftext|>", 3), ("<|user|>", 3)]
    tok = labkit.load(write_gguf(tmp_path / "t.gguf", "gpt-2", extra, name="Phi-3 mini"), engine="labkit")
    assert tok.encode("<|user|> \t x").ids == [260, 120]
    assert tok.encode("<|endoftext|> x").ids == [259, 32, 120]  # llama.cpp turns its strip off
    assert tok.encode("</s>\u2003x").ids == [256, 226, 128, 131, 120]  # an em space is no C whitespace
    with pytest.raises(labkit.LabkitError, match="'</s>'"):
        labkit.load(write_gguf(tmp_path / "u.gguf", "gpt-2", extra[1:], name="Phi-3 mini"), engine="labkit")


def test_jina_mask_swallows_ascii_spaces_before_it(tmp_path):
    tok = labkit.load(write_gguf(tmp_path / "t.gguf", "jina-v2-de", [("<mask>", 3)]), engine="labkit")
    assert tok.encode("a \t<mask>").ids == [97, 256]
    assert tok.encode("a\u3000<mask>").ids == [97, 227, 128, 128, 256]


def test_glm4_looks_whole_words_up_and_chatglm_merges(tmp_path):
    assert labkit.load(write_gguf(tmp_path / "a.gguf", "glm4", [("ab", 1)]), engine="labkit").encode("ab").ids == [256]
    assert labkit.load(write_gguf(tmp_path / "b.gguf", "chatglm-bpe", [("ab", 1)]), engine="labkit").encode("ab").ids == [97, 98]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab<>", min_size=1, max_size=4), min_size=1, max_size=5, unique=True),
       st.lists(st.booleans(), min_size=5, max_size=5), st.text(alphabet="ab<> ", max_size=30), st.booleans())
def test_one_leftmost_longest_pass_finds_what_longest_first_finds_without_overlaps(spellings, special, text, parse):
    # the splitter takes the one-pass path for a GGUF unless spellings overlap in part or strip spaces
    from labkit.algorithms.specials import AddedTokenSplitter, overlaps_another
    from labkit.core import AddedToken

    added = [AddedToken(s, 300 + i, special=special[i]) for i, s in enumerate(spellings)]
    splitter = AddedTokenSplitter(added, llama_cpp=True)
    assert (splitter._one_at_a_time is None) == (overlaps_another(spellings) is None)
    longest_first = AddedTokenSplitter(added, llama_cpp=True)
    longest_first._one_at_a_time = sorted(added, key=lambda a: (-len(a.content.encode()), a.id))
    assert splitter.split(text, parse) == longest_first.split(text, parse)


def test_qwen2_gguf_finds_its_added_tokens_in_one_pass():
    assert labkit.load("qwen2", engine="labkit").splitter._one_at_a_time is None
