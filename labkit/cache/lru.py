"""A thread-safe LRU store bounded by entries or by bytes, with the counts a cache reports.

Example: ``store = LruStore(max_entries=2); store.put("a", 1, size=1); store.get("a")`` -> ``1``
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable


class LruStore:
    """Least-recently-used map; evicts the oldest entries past ``max_entries`` or ``max_bytes``.

    Example: ``LruStore(max_bytes=1024).put(key, value, size=96)``
    """

    def __init__(self, *, max_entries: int | None = None, max_bytes: int | None = None):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def peek(self, key: Hashable) -> bool:
        """True if ``key`` is stored (counts nothing, moves nothing)."""
        with self._lock:
            return key in self._items

    def put(self, key: Hashable, value: Any, size: int = 1) -> None:
        with self._lock:
            if self.max_bytes is not None and size > self.max_bytes:
                return  # larger than the whole budget: storing it would evict everything
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._items[key] = (value, size)
            self.bytes += size
            while self._items and (
                (self.max_entries is not None and len(self._items) > self.max_entries)
                or (self.max_bytes is not None and self.bytes > self.max_bytes)
            ):
                _, (_, evicted_size) = self._items.popitem(last=False)
                self.bytes -= evicted_size
                self.evictions += 1

    def clear(self) -> None:
        with self._lock:
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
            }
