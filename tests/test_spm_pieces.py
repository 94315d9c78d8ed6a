"""SentencePiece's char and word cuts (labkit/algorithms/spm_pieces.py) against the loops they
transcribe: SplitIntoWords with its defaults, and the prefix matcher of user-defined pieces."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.algorithms.spm_pieces import characters, words

SPACE = "\u2581"


def split_into_words(text: str) -> list[str]:
    """model_interface.cc's SplitIntoWords (treat_ws_as_suffix=false, allow_ws_only_pieces=false)."""
    allow_whitespace_only_pieces = False
    out: list[str] = []
    in_space_run = False
    for ch in text:
        is_space = ch == SPACE
        if not out or (is_space and (not in_space_run or not allow_whitespace_only_pieces)):
            out.append("")
            in_space_run = True
        if in_space_run and not is_space:
            in_space_run = False
        out[-1] += ch
    return out


def prefix_matched(text: str, user_defined: list[str]) -> list[str]:
    """char_model.cc: at each position the longest user-defined piece there, else one character."""
    out, pos = [], 0
    while pos < len(text):
        found = max((u for u in user_defined if u and text.startswith(u, pos)), key=len, default=text[pos])
        out.append(found)
        pos += len(found)
    return out


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=f"ab{SPACE} é", max_size=30))
def test_words_are_split_into_words(text):
    assert words(text) == split_into_words(text)
    assert "".join(words(text)) == text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abc<>", max_size=30), st.lists(st.text(alphabet="abc<>", min_size=1, max_size=4), max_size=4))
def test_characters_keep_the_longest_user_defined_piece_at_each_position(text, user_defined):
    assert characters(text, user_defined) == prefix_matched(text, user_defined)
