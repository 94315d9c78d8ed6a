"""What cached ids, token strings and offsets really occupy, in bytes, from ``sys.getsizeof``
of the objects a cache entry keeps alive (checked against tracemalloc in the tests).

Small ints and token strings shared with the vocabulary are counted as if the entry owned
them, so the figure is an upper bound: a budget is never exceeded by what it does not see.
Introduced in notebook ``10_cache_boundaries``.

Example:
    >>> from labkit.cache.sizes import encoding_bytes
    >>> encoding_bytes((15496, 995), ("Hello", "Ġworld"), ((0, 5), (5, 11)))
    588
"""
from __future__ import annotations

import sys

_INT = sys.getsizeof(2**20)  # an id or an offset above the small-int cache
_PAIR = sys.getsizeof((2**20, 2**20 + 1))
_ASCII_HEADER = sys.getsizeof("a") - 1  # a compact ASCII str: header plus one byte a char


def tokens_bytes(tokens: tuple[str, ...]) -> int:
    """The tuple and every token string in it."""
    joined = "".join(tokens)
    if joined.isascii():  # exact for ASCII strings, without a call per token
        strings = _ASCII_HEADER * len(tokens) + len(joined)
    else:
        strings = sum(map(sys.getsizeof, tokens))
    return sys.getsizeof(tokens) + strings


def encoding_bytes(ids: tuple[int, ...], tokens: tuple[str, ...], offsets: tuple[tuple[int, int], ...]) -> int:
    """ids, token strings and (start, end) pairs, each with its container."""
    return (sys.getsizeof(ids) + _INT * len(ids)
            + tokens_bytes(tokens)
            + sys.getsizeof(offsets) + (_PAIR + 2 * _INT) * len(offsets))
