"""Checkers for the "Try it" exercises of notebook 03 (SentencePiece BPE).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint, and returns True/False.
Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.exercises.spm import check_score_bpe
    >>> check_score_bpe({"a": -1, "b": -2, "ab": -3}, "ab", ["ab"])
    right
    True
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

from labkit.algorithms.spm_bpe import SpmBpeModel, byte_piece
from labkit.core import LabkitError
from labkit.exercises import answerable, verdict as _verdict


@lru_cache(maxsize=1)
def _llama():
    import labkit

    return labkit.load("llama-spm", engine="labkit")


@answerable
def check_score_bpe(scores: Mapping[str, float], text: str, answer: Sequence[str]) -> bool:
    """What pieces does score BPE leave for ``text`` (already normalised, ``▁`` for spaces),
    given piece ``scores``? Every character of ``text`` must be a piece.

    Example:
        >>> from labkit.exercises.spm import check_score_bpe
        >>> check_score_bpe({"a": -1, "b": -2, "c": -3, "ab": -5, "bc": -4}, "abc", ["a", "bc"])
        right
        True
    """
    pieces = ["<unk>", *scores]
    missing = sorted({ch for ch in text if ch not in scores})
    if missing:
        raise LabkitError(f"check_score_bpe: characters {missing} of {text!r} are not pieces in the scores")
    model = SpmBpeModel(pieces, [0.0, *scores.values()], [2] + [1] * len(scores))
    return _verdict(list(answer) == model.merge(text),
                    "merge the neighbouring pair whose merged piece scores highest, leftmost on a tie, until none is a piece")


@answerable
def check_llama_tokens(text: str, answer: Sequence[str]) -> bool:
    """Which tokens does Llama-2's SentencePiece BPE give ``text`` (no BOS)?

    Example:
        >>> from labkit.exercises.spm import check_llama_tokens
        >>> check_llama_tokens(" Hello", ["▁", "▁Hello"])
        right
        True
    """
    return _verdict(list(answer) == _llama().encode(text).tokens,
                    "remember the dummy prefix: a '▁' goes in front of the text, and every space becomes '▁'")


@answerable
def check_byte_pieces(char: str, answer: Sequence[str]) -> bool:
    """Which byte-fallback pieces spell ``char`` (one ``<0xNN>`` per UTF-8 byte)?

    Example:
        >>> from labkit.exercises.spm import check_byte_pieces
        >>> check_byte_pieces("é", ["<0xC3>", "<0xA9>"])
        right
        True
    """
    return _verdict(list(answer) == [byte_piece(b) for b in char.encode("utf-8")],
                    "encode the character as UTF-8 and write each byte as <0xNN> with two upper-case hex digits")


@answerable
def check_rank_bpe_chars(merges: Sequence[tuple[str, str]], word: str, answer: Sequence[str]) -> bool:
    """What parts does rank BPE over characters (Gemma 4's loop in llama.cpp) leave for ``word``,
    given the ``merges`` list in rank order?

    Example:
        >>> from labkit.exercises.spm import check_rank_bpe_chars
        >>> check_rank_bpe_chars([("a", "b")], "abb", ["ab", "b"])
        right
        True
    """
    from labkit.algorithms.llama_bpe_utf8 import merge_ranks, merge_word

    return _verdict(list(answer) == merge_word(word, merge_ranks(merges)),
                    "merge the neighbouring pair listed earliest among the merges, leftmost on a tie, until no pair is listed")
