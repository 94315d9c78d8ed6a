"""Offsets the way ``sentencepiece`` reports them for a ``.model`` file.

sentencepiece maps each piece's normalised span straight through its normalised-to-original
alignment: a piece made only of inserted text (the dummy prefix ``▁``) is zero-width, and of
the byte-fallback pieces spelling one character only the last one covers it (its earlier
bytes end where the character starts, since offsets are whole characters).
Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.algorithms.spm_offsets import sentencepiece_offsets
    >>> sentencepiece_offsets([(5, 0, 1), (9, 1, 2)], [0, 0, 1])
    [(5, 0, 0), (9, 0, 1)]
"""
from __future__ import annotations


def sentencepiece_offsets(spans: list[tuple[int, int, int]], align: list[int]) -> list[tuple[int, int, int]]:
    """(id, start, end) in normalised chars -> (id, start, end) in original chars, as
    sentencepiece does; ``align[j]`` is the original char where normalised char ``j`` came from
    (``align[len]`` the end of the text).

    Example:
        >>> from labkit.algorithms.spm_offsets import sentencepiece_offsets
        >>> sentencepiece_offsets([(7, 1, 2), (8, 1, 2)], [0, 1, 2])
        [(7, 1, 1), (8, 1, 2)]
    """
    out = []
    last = len(spans) - 1
    for index, (piece_id, start, end) in enumerate(spans):
        begin = align[start]
        if index < last and spans[index + 1][1] == start and spans[index + 1][2] == end:
            out.append((piece_id, begin, begin))  # an earlier byte of a byte-fallback character
        else:
            out.append((piece_id, begin, align[end]))
    return out
