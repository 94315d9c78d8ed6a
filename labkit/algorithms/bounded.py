"""A dict that empties itself when full: the one bounded cache every engine and stream uses.

Word caches and decode memos must not grow without limit on an endless stream of new keys,
yet an LRU's bookkeeping would cost more than the work a hit saves. Clearing everything at
the limit keeps memory bounded and costs nothing on a hit; the common keys come back quickly.
Introduced in notebook ``02_bpe_byte_level`` (the word cache).

Example:
    >>> from labkit.algorithms.bounded import BoundedDict
    >>> cache = BoundedDict(2)
    >>> cache["a"] = 1
    >>> cache["b"] = 2
    >>> cache["c"] = 3
    >>> dict(cache)
    {'c': 3}
"""
from __future__ import annotations

# the default size of a per-engine word cache (entries, not bytes)
WORD_CACHE_ENTRIES = 200_000


class BoundedDict(dict):
    """A dict holding at most ``limit`` entries: storing a new key into a full one clears it first.

    Reads are plain ``dict`` reads (``get``, ``in``, ``[]``), so a hit costs what a dict hit costs.

    Example:
        >>> from labkit.algorithms.bounded import BoundedDict
        >>> print(BoundedDict(1000).get("word"))
        None
    """

    __slots__ = ("limit",)

    def __init__(self, limit: int = WORD_CACHE_ENTRIES):
        super().__init__()
        if type(limit) is not int or limit < 1:
            raise ValueError(f"BoundedDict limit must be a positive int, got {limit!r}")
        self.limit = limit

    def __setitem__(self, key, value) -> None:
        if len(self) >= self.limit and key not in self:
            self.clear()  # bounded memory; see the module docstring for why not an LRU
        dict.__setitem__(self, key, value)

    def update(self, entries: dict) -> None:
        """Store many entries at once (one C call): clears first when they might not all fit,
        and keeps none of a batch larger than the whole cache.

        Example:
            >>> cache = BoundedDict(3)
            >>> cache.update({"a": 1, "b": 2}); cache.update({"c": 3, "d": 4}); dict(cache)
            {'c': 3, 'd': 4}
        """
        if len(self) + len(entries) > self.limit:
            self.clear()
        if len(entries) <= self.limit:
            dict.update(self, entries)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)
