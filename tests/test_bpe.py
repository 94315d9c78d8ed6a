"""Byte-level BPE: the byte map, naive vs heap BPE, and the labkit engine against tokenizers
and tiktoken on every shipped vector and on hypothesis text."""
from __future__ import annotations

import random
import unicodedata
import unittest.mock

import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from tiktoken.load import load_tiktoken_bpe
from tokenizers import pre_tokenizers

import labkit
from labkit.algorithms import bpe
from labkit.core import EngineUnavailable
from labkit.algorithms.bytes_unicode import (
    bytes_to_gpt2,
    bytes_to_unicode,
    gpt2_to_bytes,
    moved_bytes,
    text_to_gpt2,
    unicode_to_bytes,
)
from labkit.engines import hf
from labkit.engines.labkit_bpe_byte import ByteLevelBPE, build
from labkit.formats.gguf import read_gguf
from labkit.formats.tiktoken_file import read_tiktoken
from labkit.paths import bundled_path
from labkit.vectors import VECTOR_NAMES, load_vectors
from support.texts import texts

BYTE_LEVEL = ("gpt2", "qwen2")


@pytest.fixture(scope="module")
def vocabs():
    return {name: read_gguf(bundled_path(name)) for name in BYTE_LEVEL}


@pytest.fixture(scope="module")
def engines(vocabs):
    return {name: build(v) for name, v in vocabs.items()}


@pytest.fixture(scope="module")
def references(vocabs):
    return {name: hf.build(v) for name, v in vocabs.items()}


@pytest.fixture(scope="module")
def cl100k():
    path = bundled_path("cl100k_base")
    ranks = load_tiktoken_bpe(str(path))
    with unittest.mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *a, **k: ranks):
        spec = openai_public.cl100k_base()
    return build(read_tiktoken(path)), tiktoken.Encoding(**spec)


# ----------------------------------------------------------------------------- the byte map


def test_byte_map_matches_tokenizers_alphabet_and_is_a_bijection():
    table = bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    assert set(table.values()) == set(pre_tokenizers.ByteLevel.alphabet())
    assert unicode_to_bytes() == {ch: b for b, ch in table.items()}
    # printable Latin-1 stays put, the 68 others move to U+0100.. in byte order
    moved = moved_bytes()
    assert len(moved) == 68 and moved[:3] == [0, 1, 2] and moved[32:35] == [0x20, 0x7F, 0x80]
    assert [ord(table[b]) for b in moved] == list(range(0x100, 0x100 + 68))
    assert table[0x20] == "Ġ" and table[0x0A] == "Ċ" and table[0xAD] == chr(0x100 + 67) and table[ord("A")] == "A"


@settings(max_examples=200, deadline=None)
@given(texts)
def test_text_to_gpt2_matches_tokenizers_byte_level(text):
    level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    expected = "".join(piece for piece, _ in level.pre_tokenize_str(text))
    assert text_to_gpt2(text) == expected
    assert gpt2_to_bytes(text_to_gpt2(text)) == text.encode("utf-8")


def test_bad_gpt2_spelling_raises():
    with pytest.raises(labkit.LabkitError, match="not in the GPT-2 byte map"):
        gpt2_to_bytes("a b")
    with pytest.raises(labkit.LabkitError):
        bytes_to_gpt2("text")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- rank BPE


def test_hand_checked_merges():
    # ranks: (l,o)=0, (lo,w)=1, (e,r)=2, (low,er)=3
    ranks = {(b"l", b"o"): 0, (b"lo", b"w"): 1, (b"e", b"r"): 2, (b"low", b"er"): 3}
    for fn in (bpe.bpe_naive, bpe.bpe_heap):
        trace = bpe.MergeTrace()
        out = fn(bpe.byte_parts(b"lower"), bpe.pair_ranker(ranks), trace=trace)
        assert out == [b"lower"]
        assert [(s.left, s.right, s.rank, s.position) for s in trace.steps] == [
            (b"l", b"o", 0, 0), (b"lo", b"w", 1, 0), (b"e", b"r", 2, 1), (b"low", b"er", 3, 0)]
    # equal ranks: leftmost first, so "aaa" -> "aa" + "a"
    assert bpe.bpe_heap(bpe.byte_parts(b"aaa"), bpe.concat_ranker({b"aa": 0})) == [b"aa", b"a"]
    assert bpe.bpe_naive(bpe.byte_parts(b"aaa"), bpe.concat_ranker({b"aa": 0})) == [b"aa", b"a"]


def test_naive_and_heap_agree_with_identical_traces(engines):
    tok = engines["gpt2"]
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyz  eeeaaa'!é日😀0123"
    for _ in range(300):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        t1, t2 = bpe.MergeTrace(), bpe.MergeTrace()
        a = bpe.bpe_naive(bpe.byte_parts(word.encode()), tok.rank, trace=t1)
        b = bpe.bpe_heap(bpe.byte_parts(word.encode()), tok.rank, trace=t2)
        assert a == b
        assert t1.steps == t2.steps and t1.final == t2.final == tuple(a)
        assert tok.word_ids(word, naive=True) == tok.word_ids(word)


def test_bpe_rejects_bad_parts():
    with pytest.raises(labkit.LabkitError):
        bpe.bpe_naive([b"a", ""], bpe.concat_ranker({}))  # type: ignore[list-item]


# ----------------------------------------------------------------------------- the engine


@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_every_shipped_vector(engines, name):
    tok = engines[name]
    for text, expected in load_vectors(name):
        assert tok.encode(text, parse_special=False).ids == expected, repr(text)
        assert tok.encode_ordinary(text) == expected


@pytest.mark.parametrize("name", BYTE_LEVEL)
def test_all_vector_inputs_against_tokenizers(engines, references, name):
    tok, ref = engines[name], references[name]
    for vector_name in VECTOR_NAMES:
        for text, _ in load_vectors(vector_name):
            for parse_special in (False, True):
                assert tok.encode(text, parse_special=parse_special).ids == ref.encode(text, parse_special=parse_special).ids


@settings(max_examples=250, deadline=None)
@given(texts)
def test_hypothesis_text_against_tokenizers(engines, references, text):
    for name in BYTE_LEVEL:
        tok, ref = engines[name], references[name]
        got = tok.encode(text, parse_special=False)
        assert got.ids == ref.encode(text, parse_special=False).ids, name
        assert tok.encode(text, parse_special=True).ids == ref.encode(text, parse_special=True).ids, name
        assert tok.decode(got.ids) == ref.decode(got.ids)
        assert all(0 <= s <= e <= len(text) for s, e in got.offsets)
        if unicodedata.is_normalized("NFC", text) or name == "gpt2":
            # offsets agree too (NFC-changed text aligns more coarsely here: whole chunks)
            assert got.offsets == ref.encode(text, parse_special=False).offsets, name
        else:
            assert len(got.offsets) == len(got.ids)


def test_cl100k_vectors_against_tiktoken(cl100k):
    tok, ref = cl100k
    for vector_name in VECTOR_NAMES:
        for text, _ in load_vectors(vector_name):
            assert tok.encode(text, parse_special=False).ids == ref.encode_ordinary(text), repr(text)


@settings(max_examples=250, deadline=None)
@given(texts)
def test_cl100k_hypothesis_against_tiktoken(cl100k, text):
    tok, ref = cl100k
    ids = tok.encode(text, parse_special=False).ids
    assert ids == ref.encode_ordinary(text)
    assert tok.encode(text, parse_special=True).ids == ref.encode(text, allowed_special="all")
    assert tok.decode(ids) == ref.decode(ids)


def test_decode_is_exact_and_replaces_invalid_utf8(engines, references):
    tok, ref = engines["gpt2"], references["gpt2"]
    ids = tok.encode("日本 😀").ids
    for cut in range(len(ids) + 1):
        assert tok.decode(ids[:cut]) == ref.decode(ids[:cut])
    # a lone continuation byte and a truncated 3-byte sequence
    lone = tok.token_to_id(bytes_to_gpt2(b"\x80"))
    lead = tok.token_to_id(bytes_to_gpt2(b"\xe6"))
    assert tok.decode([lone, lead]) == ref.decode([lone, lead]) == "\ufffd\ufffd"
    assert tok.decode([50256]) == "<|endoftext|>" and tok.decode([50256], skip_special_tokens=True) == ""


def test_special_tokens_and_parse_special(engines):
    tok = engines["qwen2"]
    im_start = tok.token_to_id("<|im_start|>")
    assert tok.encode("<|im_start|>user", parse_special=True).ids[0] == im_start
    assert im_start not in tok.encode("<|im_start|>user", parse_special=False).ids


def test_unknown_ids_and_bad_input_raise(engines):
    tok = engines["gpt2"]
    with pytest.raises(labkit.LabkitError, match="unknown id"):
        tok.decode([10**9])
    with pytest.raises(labkit.LabkitError):
        tok.encode(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(labkit.LabkitError):
        tok.encode_ordinary(None)  # type: ignore[arg-type]


def test_build_refuses_other_models():
    vocab = read_gguf(bundled_path("llama-spm"))
    with pytest.raises(EngineUnavailable):
        build(vocab)


def test_word_cache_gives_the_same_ids_cold_and_warm(engines):
    tok = engines["qwen2"]
    text = "The cache is keyed by pre-token: 12345 héllo wörld 日本語"
    tok.clear_cache()
    cold = tok.encode(text).ids
    assert tok.encode(text).ids == cold == tok.encode_ordinary(text)


def test_merge_trace_on_real_vocab(engines):
    tok = engines["gpt2"]
    trace = tok.merge_trace(" lower")
    # each merge makes a part that only later (higher-rank) merges can use
    assert trace.final == (b" lower",) and [s.rank for s in trace.steps] == sorted(s.rank for s in trace.steps)
    assert b"".join(trace.initial) == b" lower" and tok.word_ids(" lower") == [2793]
    assert [s.merged for s in trace.steps][-1] == b" lower"


def test_ignore_merges_takes_known_words_whole(vocabs):
    vocab = vocabs["gpt2"]
    plain = ByteLevelBPE(vocab)
    llama_like = ByteLevelBPE(vocab, pre="llama3")
    assert llama_like.ignore_merges and not plain.ignore_merges
    # every single token's text comes back as that token when looked up whole
    for token_id in (995, 2793, 15496):
        word = plain.id_bytes[token_id].decode()
        assert llama_like.word_ids(word) == [token_id]
