"""Notebook 03's checkers: a right answer passes, a wrong one fails with its hint, and a rank
loop over characters is not a score loop (exercise 4 tells them apart)."""
from __future__ import annotations

from labkit.exercises.spm import check_byte_pieces, check_rank_bpe_chars, check_score_bpe

MERGES = [("a", "b"), ("b", "c"), ("ab", "c")]


def test_rank_bpe_over_characters_right_and_wrong(capsys):
    assert check_rank_bpe_chars(MERGES, "abcbc", ["abc", "bc"])
    assert not check_rank_bpe_chars(MERGES, "abcbc", ["ab", "c", "bc"])  # stopped one merge early
    assert not check_rank_bpe_chars(MERGES, "abcbc", ["a", "bc", "bc"])  # 'bc' first: ranks read backwards
    assert "listed earliest" in capsys.readouterr().out


def test_the_score_and_byte_checkers_right_and_wrong():
    assert check_score_bpe({"a": -1, "b": -2, "ab": -3, "ba": -3, "aba": -4}, "abab", ["ab", "ab"])
    assert not check_score_bpe({"a": -1, "b": -2, "ab": -3, "ba": -3, "aba": -4}, "abab", ["aba", "b"])
    assert check_byte_pieces("€", ["<0xE2>", "<0x82>", "<0xAC>"])
    assert not check_byte_pieces("€", ["<0xe2>", "<0x82>", "<0xac>"])
