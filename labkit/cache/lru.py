"""A thread-safe LRU store bounded by entries or by bytes, with the counts a cache reports.

Example:
    >>> from labkit.cache.lru import LruStore
    >>> store = LruStore(max_entries=2)
    >>> store.put("a", 1, size=1)
    >>> store.get("a")
    1
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable


class LruStore:
    """Least-recently-used map; evicts the oldest entries past ``max_entries`` or ``max_bytes``.

    Example:
        >>> from labkit.cache.lru import LruStore
        >>> store = LruStore(max_bytes=1024)
        >>> store.put("key", [1, 2, 3], size=96)
        >>> store.get("key")
        [1, 2, 3]
    """

    def __init__(self, *, max_entries: int | None = None, max_bytes: int | None = None,
                 max_entry: int | None = None):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        # what one entry may take; larger ones are refused, so one value cannot flush the store
        self.max_entry = max_entry if max_entry is not None else max_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.refused = 0

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def count_miss(self) -> None:
        """Count a lookup that was answered without looking (the key cannot be stored)."""
        with self._lock:
            self.misses += 1

    def peek(self, key: Hashable) -> bool:
        """True if ``key`` is stored (counts nothing, moves nothing)."""
        with self._lock:
            return key in self._items

    def put(self, key: Hashable, value: Any, size: int = 1) -> None:
        with self._lock:
            if self.max_entry is not None and size > self.max_entry:
                self.refused += 1
                return  # storing it would evict a large share of the store
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
                self._forget(key)
            self._remember(key)
            self._items[key] = (value, size)
            self.bytes += size
            while self._items and (
                (self.max_entries is not None and len(self._items) > self.max_entries)
                or (self.max_bytes is not None and self.bytes > self.max_bytes)
            ):
                evicted_key, (_, evicted_size) = self._items.popitem(last=False)
                self.bytes -= evicted_size
                self.evictions += 1
                self._forget(evicted_key)

    def _forget(self, key: Hashable) -> None:
        """Called (inside the lock) for each key that leaves the store."""

    def _remember(self, key: Hashable) -> None:
        """Called (inside the lock) for each key that enters the store."""

    def clear(self) -> None:
        with self._lock:
            for key in self._items:
                self._forget(key)
            self._items.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def stats(self) -> dict[str, float]:
        with self._lock:
            lookups = self.hits + self.misses
            return {
                "hits": self.hits,
                "misses": self.misses,
                "hit_rate": self.hits / lookups if lookups else 0.0,
                "entries": len(self._items),
                "bytes": self.bytes,
                "evictions": self.evictions,
                "refused": self.refused,
            }


class TextStore(LruStore):
    """L0's store: keys are ``(fingerprint, text, flags...)`` and it remembers which text
    lengths it holds, so a lookup for a length it does not hold is skipped without hashing
    the text (``may_hold``).

    Example:
        >>> from labkit.cache.lru import TextStore
        >>> store = TextStore(max_bytes=2**20)
        >>> store.may_hold("hello")
        False
    """

    def __init__(self, *, max_entries: int | None = None, max_bytes: int | None = None,
                 max_entry: int | None = None):
        super().__init__(max_entries=max_entries, max_bytes=max_bytes, max_entry=max_entry)
        self._lengths: dict[int, int] = {}

    def may_hold(self, text: str) -> bool:
        return len(text) in self._lengths

    def _remember(self, key) -> None:
        width = len(key[1])
        self._lengths[width] = self._lengths.get(width, 0) + 1

    def _forget(self, key) -> None:
        width = len(key[1])
        left = self._lengths.get(width, 0) - 1
        if left > 0:
            self._lengths[width] = left
        else:
            self._lengths.pop(width, None)
