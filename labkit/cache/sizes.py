"""What cached ids, token strings and offsets really occupy, in bytes, from ``sys.getsizeof``
of the objects a cache entry keeps alive (checked against tracemalloc in the tests).

Small ints and token strings shared with the vocabulary are counted as if the entry owned
them, so the figure is an upper bound: a budget is never exceeded by what it does not see.
Introduced in notebook ``10_cache_boundaries``.

Example:
    >>> from labkit.cache.sizes import encoding_bytes
    >>> encoding_bytes((15496, 995), ("Hello", "Ġworld"), ((0, 5), (5, 11)))
    642
"""
from __future__ import annotations

import sys

# an id or an offset above the small-int cache, in pymalloc's 16-byte size classes
INT_BYTES = (sys.getsizeof(2**20) + 15) // 16 * 16
_PAIR = sys.getsizeof((2**20, 2**20 + 1))
_ASCII_HEADER = sys.getsizeof("a") - 1  # a compact ASCII str: header plus one byte a char
# a compact str whose widest character takes 1, 2 or 4 bytes: header, then that many a char
_HEADER = {width: sys.getsizeof(char) - width for width, char in ((1, "\xe9"), (2, "\u0120"), (4, "\U0001fae8"))}


def tokens_bytes(tokens) -> int:
    """The container and every token string in it: exact when all are ASCII, else an upper
    bound (each string counted at the widest character width of the lot), both without a
    call per token."""
    joined = "".join(tokens)
    if joined.isascii():
        strings = _ASCII_HEADER * len(tokens) + len(joined)
    else:
        whole = sys.getsizeof(joined)  # its size says how wide its widest character is
        width = next((w for w in (1, 2) if whole == _HEADER[w] + w * len(joined)), 4)
        strings = _HEADER[width] * len(tokens) + width * len(joined)
    return sys.getsizeof(tokens) + strings


def ids_bytes(ids) -> int:
    """A container of ids and the ints in it."""
    return sys.getsizeof(ids) + INT_BYTES * len(ids)


def tokens_offsets_bytes(tokens, offsets) -> int:
    """Token strings and (start, end) pairs, each with its container."""
    return tokens_bytes(tokens) + sys.getsizeof(offsets) + (_PAIR + 2 * INT_BYTES) * len(offsets)


def encoding_bytes(ids, tokens, offsets) -> int:
    """ids, token strings and (start, end) pairs, each with its container."""
    return ids_bytes(ids) + tokens_offsets_bytes(tokens, offsets)
