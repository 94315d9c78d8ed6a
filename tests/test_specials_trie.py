"""The added-token splitter's trie-shaped pattern finds what a longest-first alternation finds."""
from __future__ import annotations

import regex
from hypothesis import given, settings, strategies as st

from labkit.algorithms.specials import AddedTokenSplitter, trie_pattern
from labkit.core import AddedToken

# small alphabets so spellings share prefixes and meet each other in the text often
ALPHABET = st.sampled_from(list("<|>ab.*\\[]é🫨 "))
SPELLINGS = st.lists(st.text(ALPHABET, min_size=1, max_size=6), min_size=1, max_size=12, unique=True)


def flat_alternation(spellings):
    ordered = sorted(spellings, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(s) for s in ordered))


@settings(max_examples=300, deadline=None)
@given(SPELLINGS, st.text(ALPHABET, max_size=40))
def test_trie_pattern_finds_the_same_matches_as_the_flat_alternation(spellings, text):
    trie = regex.compile(trie_pattern(spellings))
    assert [m.span() for m in trie.finditer(text)] == [m.span() for m in flat_alternation(spellings).finditer(text)]


def test_many_specials_split_in_linear_time_shape():
    # 2,000 specials used to cost a flat alternation 0.5 s per 180 kB; the result is what counts here
    added = [AddedToken(f"<|extra_{i}|>", 1000 + i, special=True) for i in range(2000)]
    splitter = AddedTokenSplitter(added)
    text = "x <|extra_1999|> y <|extra_19|><|extra_1|>z <|extra_"
    assert [seg for seg in splitter.split(text) if seg[2] is not None] == [(2, 16, 2999), (19, 31, 1019), (31, 42, 1001)]
