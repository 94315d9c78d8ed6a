"""Oniguruma's word escapes (\\w \\W \\b \\B) in a tokenizer.json Split, as labkit spells them for
`regex` (labkit.algorithms.hf_normalize): the same characters as tokenizers on every code point
(outside a class Oniguruma's \\w takes ² ³ ¹ ¼ ½ ¾, inside one it does not, and never the
joiners U+200C U+200D), and the same pieces as tokenizers on random texts for boundaries."""
from __future__ import annotations

import functools
import random

import pytest
import regex
from tokenizers import Regex, pre_tokenizers

from labkit.algorithms.hf_normalize import (DIGIT_GROUPS_AT_BOUNDARY, Piece, _onig_source, digit_groups_at_boundary,
                                            pattern_matches, regex_difference)
from labkit.algorithms.hf_pretokenize import pre_tokenize

CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and c != ord("!")]
CHUNK = 20000


@functools.lru_cache(maxsize=None)
def onig_matched(pattern: str) -> frozenset[int]:
    """The code points tokenizers' Split removes, each alone between two '!' (asked once per
    pattern: two tests ask about \\w)."""
    split = pre_tokenizers.Split(Regex(pattern), behavior="removed")
    kept = set()
    for i in range(0, len(CODE_POINTS), CHUNK):
        for piece, _ in split.pre_tokenize_str("!".join(map(chr, CODE_POINTS[i:i + CHUNK]))):
            kept.update(map(ord, piece))
    return frozenset(CODE_POINTS) - kept


def labkit_matched(pattern: str) -> set[int]:
    found = set()
    for i in range(0, len(CODE_POINTS), CHUNK):
        text = "!".join(map(chr, CODE_POINTS[i:i + CHUNK]))
        found.update(ord(ch) for s, e in pattern_matches({"Regex": pattern}, text) for ch in text[s:e] if ch != "!")
    return found


@pytest.mark.parametrize("pattern", [r"\w", r"\W", r"[^\w\s]", r"[\W\d]"])
def test_word_characters_equal_oniguruma_on_every_code_point(pattern):
    assert regex_difference(pattern) is None
    assert labkit_matched(pattern) == onig_matched(pattern)


def test_regexs_own_word_class_is_not_oniguruma_s_so_the_check_can_fail():
    plain = set(map(ord, regex.findall(r"\w", "".join(map(chr, CODE_POINTS)))))  # one C pass, not 1.1M calls
    assert plain ^ onig_matched(r"\w") == {0xB2, 0xB3, 0xB9, 0xBC, 0xBD, 0xBE, 0x200C, 0x200D}


POOL = "ab_Z9٣²¹¾\u200c\u200d\u0301é中 !.-'\n\tx"
PATTERNS = [r"\b", r"\B", r"\b\w+\b", r"\w+|[^\w\s]+", r"\W+", r"[\w']+", r"\d{1,3}(?=(?:\d{3})*\b)", r"\Bb|a\b"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_pieces_equal_tokenizers_on_random_texts(pattern):
    assert regex_difference(pattern) is None
    rng = random.Random(pattern)
    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    node = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
    for _ in range(1500):
        text = "".join(rng.choice(POOL) for _ in range(rng.randint(0, 14)))
        want = split.pre_tokenize_str(text)
        got = [(p.text, (p.align[0][0], p.align[-1][1])) for p in pre_tokenize([Piece.of(text)], [node]) if p.text]
        assert got == want, (pattern, text)


@pytest.mark.parametrize("pattern", [r"[\w\W]", r"[a-\w]", r"[\w[a]]", r"[\b]"])
def test_classes_labkit_cannot_spell_are_refused(pattern):
    assert regex_difference(pattern) is not None


def test_a_nested_class_is_refused_as_regex_reads_it_otherwise():
    # Oniguruma: [a[bc]] is the union {a, b, c}; `regex`: the class {a, [, b, c} then a literal ']'
    pieces = pre_tokenizers.Split(Regex("[a[bc]]"), behavior="removed").pre_tokenize_str("xa[b]c")
    assert [p for p, _ in pieces] == ["x", "[", "]"] and regex.findall("[a[bc]]", "xa[b]c") == ["b]"]
    assert "nested class" in regex_difference("[a[bc]]")


def test_tiny_ayas_digit_groups_run_linear_with_the_regexs_spans():
    compiled = regex.compile(_onig_source(DIGIT_GROUPS_AT_BOUNDARY), regex.MULTILINE)
    rng = random.Random(11)
    for _ in range(4000):
        text = "".join(rng.choice("0123456789٣ x²\u200d._-a") for _ in range(rng.randint(0, 24)))
        assert digit_groups_at_boundary(text) == [m.span() for m in compiled.finditer(text)], text
    # a million digits: one pass (the regex backtracks over the rest of the run at each digit)
    assert len(digit_groups_at_boundary("7" * 1_000_000 + " ")) == 333_334
    assert digit_groups_at_boundary("7" * 1_000_000 + "x") == []
