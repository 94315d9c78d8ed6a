"""The piece table a SentencePiece-family model is built from: one piece, one score and one
type (sentencepiece's numbering) per id, checked the same way for score BPE
(:mod:`labkit.algorithms.spm_bpe`) and Unigram (:mod:`labkit.algorithms.unigram`).
Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.algorithms.piece_table import check_piece_table
    >>> check_piece_table("SpmBpeModel", ["<unk>", "a"], [0.0, -1.0], None)
    [1, 1]
"""
from __future__ import annotations

import math
from typing import Sequence

from labkit.core import TOKEN_NORMAL, TOKEN_UNKNOWN, LabkitError


def check_piece_table(owner: str, pieces: Sequence[str], scores: Sequence[float], types: Sequence[int] | None) -> list[int]:
    """The types per id (all NORMAL when None), after checking that every piece is a str,
    every score a number (not NaN) and that the three lists are the same length.

    Example:
        >>> check_piece_table("UnigramModel", ["a"], [float("nan")], None)
        Traceback (most recent call last):
        labkit.core.LabkitError: UnigramModel: score of piece 0 ('a') is not a number: nan
    """
    n = len(pieces)
    types = [TOKEN_NORMAL] * n if types is None else list(types)
    if len(scores) != n or len(types) != n:
        raise LabkitError(f"{owner}: {n} pieces but {len(scores)} scores and {len(types)} types")
    for i, (piece, score) in enumerate(zip(pieces, scores)):
        if not isinstance(piece, str):
            raise LabkitError(f"{owner}: piece #{i} is {type(piece).__name__}, not str")
        if not isinstance(score, (int, float)) or isinstance(score, bool) or (isinstance(score, float) and math.isnan(score)):
            raise LabkitError(f"{owner}: score of piece {i} ({piece!r}) is not a number: {str(score)[:40]}")
    return types


def unknown_id(owner: str, types: Sequence[int], unk_id: int | None = None, *, required: bool) -> int | None:
    """``unk_id`` if given, else the first UNKNOWN piece; checked to be inside the table.
    With ``required`` a table without one is an error (Unigram needs it for every lattice).

    Example:
        >>> from labkit.algorithms.piece_table import unknown_id
        >>> unknown_id("UnigramModel", [2, 1, 1], required=True)
        0
    """
    if unk_id is None:
        unk_id = next((i for i, kind in enumerate(types) if kind == TOKEN_UNKNOWN), None)
        if unk_id is None:
            if required:
                raise LabkitError(f"{owner}: the vocabulary has no UNKNOWN piece")
            return None
    if not 0 <= unk_id < len(types):
        raise LabkitError(f"{owner}: unk id {unk_id} is outside the vocabulary (0..{len(types) - 1})")
    return unk_id
