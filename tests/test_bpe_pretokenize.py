"""Pre-tokenizer table: each regex list (run by the `regex` module) splits exactly as
`tokenizers` (Oniguruma) does, tiktoken's spellings equal the plain ones, names resolve."""
from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from tokenizers import Regex, normalizers, pre_tokenizers

import labkit
from labkit.algorithms.pretokenize import (
    CUSTOM_STEP_REGEXES,
    PRE_ALIASES,
    PRE_TOKENIZERS,
    get_pre_tokenizer,
    known_pre_names,
    nfc_with_offsets,
    pretokenize,
)
from support.texts import texts

import regex

TIKTOKEN_NAMES = ("r50k", "cl100k", "o200k")
REQUIRED = ("gpt-2", "llama-bpe", "llama3", "qwen2", "qwen35", "deepseek-llm", "deepseek-coder", "falcon",
            "starcoder", "refact", "mpt", "command-r", "gpt-4o", "o200k", "r50k", "p50k", "cl100k")


def hf_split(spec, text):
    # a step llama.cpp runs as a function of its own (afmoe's digit groups) as its regex spelling
    steps = [CUSTOM_STEP_REGEXES.get(r, r) for r in spec.regexes]
    seq = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r), behavior="isolated") for r in steps])
    return [piece for piece, _ in seq.pre_tokenize_str(text)]


def test_required_names_are_known():
    for name in REQUIRED:
        assert get_pre_tokenizer(name).regexes
    assert get_pre_tokenizer("llama-bpe") is get_pre_tokenizer("llama3")
    assert get_pre_tokenizer("llama3").ignore_merges and not get_pre_tokenizer("gpt-2").ignore_merges
    assert get_pre_tokenizer("qwen2").nfc and not get_pre_tokenizer("llama3").nfc
    assert set(PRE_ALIASES).isdisjoint(PRE_TOKENIZERS)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(labkit.LabkitError) as info:
        get_pre_tokenizer("no-such-pre")
    message = str(info.value)
    assert "no-such-pre" in message and all(name in message for name in known_pre_names())
    with pytest.raises(labkit.LabkitError):
        get_pre_tokenizer(3)  # type: ignore[arg-type]


def test_known_splits():
    assert pretokenize("Hello world's 12345", "gpt-2") == ["Hello", " world", "'s", " 12345"]
    assert pretokenize("x 12345", "llama3") == ["x", " ", "123", "45"]
    assert pretokenize("I'm 2024", "qwen2") == ["I", "'m", " ", "2", "0", "2", "4"]
    assert pretokenize("CamelCase isn't", "gpt-4o") == ["Camel", "Case", " isn't"]
    assert pretokenize("abc 42", "starcoder") == ["abc", " ", "4", "2"]
    # NFC first: e + U+0301 becomes one letter, so it is not cut off as "other"
    assert pretokenize("cafe\u0301", "qwen2") == ["caf\u00e9"]
    assert pretokenize("cafe\u0301", "llama3") == ["cafe", "\u0301"]


def _assigned(text: str) -> bool:
    # `regex` carries newer Unicode tables than Oniguruma: a code point unassigned in older
    # versions (e.g. U+3D000, Lo for `regex`, Cn for Python 3.11) can fall in another class
    return all(unicodedata.category(ch) != "Cn" for ch in text)


@settings(max_examples=150, deadline=None)
@given(texts.filter(_assigned))
def test_every_table_entry_splits_like_tokenizers(text):
    for name, spec in PRE_TOKENIZERS.items():
        assert spec.split_normalized(text) == hf_split(spec, text), name


@settings(max_examples=150, deadline=None)
@given(texts)
def test_portable_spellings_split_like_tiktoken_pat_str(text):
    for name in TIKTOKEN_NAMES:
        spec = get_pre_tokenizer(name)
        assert spec.split(text) == regex.findall(spec.tiktoken_pattern, text), name
    # r50k is GPT-2's split and o200k GPT-4o's
    assert get_pre_tokenizer("r50k").split(text) == get_pre_tokenizer("gpt-2").split(text)
    assert get_pre_tokenizer("o200k").split(text) == get_pre_tokenizer("gpt-4o").split(text)


def test_cl100k_is_not_llama3_at_the_end_of_a_text():
    assert pretokenize("a\n ", "cl100k") == ["a", "\n "]
    assert pretokenize("a\n ", "llama3") == ["a", "\n", " "]


@settings(max_examples=150, deadline=None)
@given(texts)
def test_spans_cover_the_text(text):
    for spec in PRE_TOKENIZERS.values():
        spans = spec.spans(text)
        assert "".join(text[s:e] for s, e in spans) == text
        assert all(s < e for s, e in spans)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_nfc_with_offsets(text):
    normalized, mapping = nfc_with_offsets(text)
    assert normalized == normalizers.NFC().normalize_str(text)
    assert len(mapping) == len(normalized)
    assert all(0 <= s < e <= len(text) for s, e in mapping)
