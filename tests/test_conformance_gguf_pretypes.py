"""GGUF rows of the conformance matrix (issue 19): labkit's pre-type table checked against
facts transcribed from llama.cpp's src/llama-vocab.cpp (regex lists, names, ignore_merges),
and a GGUF written from a trained vocabulary for every pre type labkit lists, served by
every engine, compared with a tokenizers pipeline built from those facts (not from labkit)."""
from __future__ import annotations

import pytest
import regex

import labkit
from labkit.algorithms.pretokenize import PRE_ALIASES, PRE_TOKENIZERS, get_pre_tokenizer
from labkit.conformance.corpus import mixed_corpus
from labkit.conformance.gguf_pretypes import (
    LLAMA_CPP_PRE_NAMES,
    LLAMA_CPP_PRE_TYPES,
    NFC_PRE_TYPES,
    gguf_cases,
)
from labkit.conformance.runner import run_case
from labkit.vectors import load_vectors

GGUF_NAMES = sorted([name for name, spec in PRE_TOKENIZERS.items() if spec.tiktoken_pattern is None]
                    + [alias for alias, name in PRE_ALIASES.items() if PRE_TOKENIZERS[name].tiktoken_pattern is None])
TEXTS = mixed_corpus() + ["I'M HERE'S it's", "CamelCaseWord éÉ", "a\r\nb \n\n x", "12345 1234567 ١٢٣",
                          "x  \n", "中文 English 日本語 한국어", "$5+3=8 <tag> ^~|`", "…。，、।۔، (x|y)"]


def llama_cpp_split(regexes: tuple[str, ...], text: str) -> list[str]:
    """llama.cpp's unicode_regex_split as a plain loop: each regex cuts every piece, the text
    between matches stays a piece, and an empty match cuts where it is (written here from
    llama.cpp's unicode_regex_split_stl, not from labkit)."""
    pieces = [text] if text else []
    for pattern in regexes:
        compiled = regex.compile(pattern)
        out = []
        for piece in pieces:
            cursor = 0
            for m in compiled.finditer(piece):
                if m.start() > cursor:
                    out.append(piece[cursor:m.start()])
                if m.group():
                    out.append(m.group())
                cursor = m.end()
            if cursor < len(piece):
                out.append(piece[cursor:])
        pieces = out
    return pieces


# labkit's own spelling, not a tokenizer.ggml.pre value (llama.cpp names the type "gpt-2"
# and would refuse "gpt2" as an unknown pre-tokenizer type)
LABKIT_ONLY = {"gpt2"}


def test_every_gguf_name_labkit_lists_is_a_llama_cpp_name():
    assert set(GGUF_NAMES) - set(LLAMA_CPP_PRE_NAMES) == LABKIT_ONLY
    assert len(GGUF_NAMES) == 88  # 37 specs and their aliases


def test_a_gguf_naming_a_split_llama_cpp_does_not_know_is_refused_unless_the_caller_names_it(tmp_path):
    # llama.cpp 0c1e5709 does not load such a file ("unknown pre-tokenizer type: 'gpt2'", seen with
    # llama-cpp-python 0.3.36); labkit reads a GGUF as llama.cpp does, and a caller may still choose the split
    from labkit.algorithms.llama_bpe_utf8 import UTF8_BPE_RULES
    from labkit.algorithms.pretokenize import NOT_LLAMA_CPP_NAMES, known_pre_names
    from labkit.conformance.gguf_pretypes import write_byte_level_gguf

    assert set(known_pre_names()) - set(LLAMA_CPP_PRE_NAMES) - set(UTF8_BPE_RULES) == NOT_LLAMA_CPP_NAMES
    for name in ("gpt2", "cl100k"):
        path = str(write_byte_level_gguf(tmp_path / f"{name}.gguf", ["a", "b", "ab"], [1, 1, 1], ["a b"], name))
        with pytest.raises(labkit.LabkitError, match="llama.cpp does not know"):
            labkit.load(path, engine="labkit")
        assert labkit.load(path, engine="labkit", pre=name).encode("ab").ids == [2]


@pytest.mark.parametrize("name", sorted(set(GGUF_NAMES) - LABKIT_ONLY))
def test_pre_type_matches_llama_cpp(name):
    spec = get_pre_tokenizer(name)
    family, ignore_merges = LLAMA_CPP_PRE_NAMES[name]
    assert spec.ignore_merges == ignore_merges
    assert spec.nfc == (name in NFC_PRE_TYPES)
    facts = LLAMA_CPP_PRE_TYPES[family]
    for text in TEXTS:
        assert spec.split_normalized(text) == llama_cpp_split(facts, text), (name, text)


def test_qwen35_keeps_a_decomposed_accent_as_two_pieces_like_llama_cpp_vectors():
    assert not get_pre_tokenizer("qwen35").nfc
    assert get_pre_tokenizer("qwen35").split("cafe\u0301") == ["cafe\u0301"]  # \p{M} stays in the word
    assert get_pre_tokenizer("qwen2").split("cafe\u0301") == ["café"]


CASES = {case.name: case for case in gguf_cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gguf_pre_type_rows_are_exact_or_refused(name, tmp_path_factory):
    cells = run_case(CASES[name], tmp_path_factory.mktemp("gguf"), engines=("labkit", "hf", "tiktoken", "default"))
    for cell in cells:
        assert cell.status in ("exact", "refused"), (cell.engine, cell.message)
        if cell.status == "refused":
            # tiktoken takes one regex; tokenizers has no step for llama.cpp's digit grouping function
            assert (cell.engine == "tiktoken" and "pre-tokenizer" in cell.message) or (
                cell.engine == "hf" and "llama.cpp's own function" in cell.message), (cell.engine, cell.message)
        else:
            assert cell.strings > 150 and cell.comparisons == 8 * cell.strings
    assert {c.engine: c.status for c in cells}["labkit"] == "exact"


@pytest.mark.parametrize("name", ["gpt2", "qwen2"])
def test_labkit_engine_passes_the_llama_cpp_vectors_of_its_pre_types(name):
    tok = labkit.load(name, engine="labkit")
    for text, expected in load_vectors(name):
        assert tok.encode(text, parse_special=False).ids == expected, text


def test_llama_cpps_digit_grouping_function_equals_its_regex_spelling_and_runs_in_linear_time():
    """labkit runs llama.cpp's digit grouping (afmoe, tiny_aya) as a function; the facts spell it
    as a regex. Both cut random text alike; the function also takes a million digits or letters
    in one pass (the regex is quadratic on such runs in tokenizers: 16 s for 80,000 letters)."""
    import random

    from labkit.algorithms.pretokenize import digit_groups

    step = LLAMA_CPP_PRE_TYPES["AFMOE"][0]
    rng = random.Random(6)
    for _ in range(3000):
        text = "".join(rng.choice("ab 1234\n٣४½²x.") for _ in range(rng.randint(0, 30)))
        assert [text[s:e] for s, e in digit_groups(text)] == llama_cpp_split((step,), text), repr(text)
        if len(text) > 4:  # inside a piece only: a group never reaches out of it
            assert all(3 <= s and e <= len(text) - 1 for s, e in digit_groups(text, 3, len(text) - 1))
    assert len(digit_groups("7" * 1_000_000)) == 333_334 and digit_groups("a" * 1_000_000) == [(0, 1_000_000)]
