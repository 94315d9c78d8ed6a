"""A thread-safe LRU store bounded by entries or by bytes, with the counts a cache reports.

Example:
    >>> from labkit.cache.lru import LruStore
    >>> store = LruStore(max_entries=2)
    >>> store.put("a", 1, size=1)
    >>> store.get("a")
    1
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any, Hashable

from labkit.cache.sizes import INT_BYTES, ids_bytes, tokens_offsets_bytes


# a store (or an L1 node) whose first ADMIT_AFTER entries are rarely found again keeps 1 new one in ADMIT_ONE_IN
ADMIT_AFTER = 32
ADMIT_ONE_IN = 8


def rarely_found(added: int, found: int, admit_after: int | None) -> bool:
    """Whether a level that stored ``added`` entries, of which lookups found ``found``, should
    keep only 1 new entry in ``ADMIT_ONE_IN``: after ``admit_after`` stores, fewer than 1 in
    ``ADMIT_ONE_IN`` were found again (a stream of ever new prompts: storing the rest would
    cost every request and serve none). ``admit_after=None`` stores everything.

    Example:
        >>> from labkit.cache.lru import rarely_found
        >>> rarely_found(40, 0, 32), rarely_found(40, 10, 32), rarely_found(10, 0, 32)
        (True, False, False)
    """
    return admit_after is not None and added >= admit_after and found * ADMIT_ONE_IN < added


def level_stats(level, entries: int) -> dict[str, float]:
    """The figures every cache level reports, from its counters and its number of entries.

    Example:
        >>> from types import SimpleNamespace
        >>> level_stats(SimpleNamespace(hits=3, misses=1, bytes=640, evictions=0, refused=0), entries=2)["hit_rate"]
        0.75
    """
    lookups = level.hits + level.misses
    return {
        "hits": level.hits,
        "misses": level.misses,
        "hit_rate": level.hits / lookups if lookups else 0.0,
        "entries": entries,
        "bytes": level.bytes,
        "evictions": level.evictions,
        "refused": level.refused,
    }


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

    def put(self, key: Hashable, value: Any, size: int = 1) -> None:
        with self._lock:
            if self.max_entry is not None and size > self.max_entry:
                self.refused += 1
                return  # storing it would evict a large share of the store
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
                self._removed(old[0])
            self._items[key] = (value, size)
            self._added(value)
            self.bytes += size
            self._evict_past_budget()

    def _added(self, value) -> None:
        """Called inside the lock when ``value`` is stored (a subclass keeps an index of its own)."""

    def _removed(self, value) -> None:
        """Called inside the lock when ``value`` leaves the store (replaced or evicted)."""

    def _evict_past_budget(self) -> None:
        """Drop the oldest entries while the store is over a limit (inside the lock)."""
        while self._items and (
            (self.max_entries is not None and len(self._items) > self.max_entries)
            or (self.max_bytes is not None and self.bytes > self.max_bytes)
        ):
            _, (evicted, evicted_size) = self._items.popitem(last=False)
            self._removed(evicted)
            self.bytes -= evicted_size
            self.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._cleared()
            self.bytes = 0

    def _cleared(self) -> None:
        """Called inside the lock when the store is emptied."""

    def __len__(self) -> int:
        return len(self._items)

    def stats(self) -> dict[str, float]:
        with self._lock:
            return level_stats(self, len(self._items))


class TextStore(LruStore):
    """L0's store: whole texts and their ids, found without hashing the text.

    The key is the fingerprint, the flags, the text's length and its first and last
    characters; the entry keeps the text, and a lookup confirms it by comparing the whole
    text (equality stops at the first difference). Two texts with the same key share one
    slot: the later one replaces the earlier, as an eviction would. Token strings and
    offsets are kept once a caller has read them (``fill``), and charged then.

    Example:
        >>> from labkit.cache.lru import TextStore
        >>> store = TextStore(max_bytes=2**20)
        >>> store.store(b"fp", "hello", False, True, (31373,))
        >>> store.lookup(b"fp", "hello", False, True).ids
        (31373,)
    """

    def __init__(self, *, admit_after: int | None = ADMIT_AFTER, **limits):
        super().__init__(**limits)
        self._lengths: dict[int, int] = {}  # how many stored texts have each length
        self.admit_after = admit_after
        self.added = 0  # texts offered to store()
        self.declined = 0  # texts not stored by admits()

    def admits(self) -> bool:
        """Whether to store one more text: every one until the store's texts turn out to be
        rarely found again (:func:`rarely_found`), then 1 in ``ADMIT_ONE_IN``.

        Example:
            >>> from labkit.cache.lru import TextStore
            >>> store = TextStore(max_bytes=2**20, admit_after=2)
            >>> for text in ("a", "b"):
            ...     store.store(b"fp", text, False, True, (1,))
            >>> [store.admits() for _ in range(8)]
            [False, False, False, False, False, False, False, True]
        """
        if not rarely_found(self.added, self.hits, self.admit_after):
            return True
        self.declined += 1
        return self.declined % ADMIT_ONE_IN == 0

    def lookup(self, fingerprint: bytes, text: str, add_special_tokens: bool, parse_special: bool) -> "TextEntry | None":
        """The entry for exactly this text and these flags (counts one hit or one miss)."""
        if len(text) not in self._lengths:  # no stored text is this long: a miss, without building a key
            with self._lock:
                self.misses += 1
            return None
        key = _text_key(fingerprint, text, add_special_tokens, parse_special)
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0].text != text:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def store(self, fingerprint: bytes, text: str, add_special_tokens: bool, parse_special: bool, ids: tuple) -> None:
        self.added += 1
        entry = TextEntry(text, ids)
        self.put(_text_key(fingerprint, text, add_special_tokens, parse_special), entry,
                 size=_ENTRY_OVERHEAD + sys.getsizeof(text) + ids_bytes(ids))

    def fill(self, entry: "TextEntry", tokens: tuple, offsets: tuple) -> None:
        """Keep an entry's token strings and offsets, if it is still stored and within its share."""
        extra = tokens_offsets_bytes(tokens, offsets)
        with self._lock:
            key = entry.key
            item = self._items.get(key) if key is not None else None
            if item is None or item[0] is not entry or entry.tokens is not None:
                return
            if self.max_entry is not None and item[1] + extra > self.max_entry:
                return
            entry.tokens, entry.offsets = tokens, offsets
            self._items[key] = (entry, item[1] + extra)
            self.bytes += extra
            self._evict_past_budget()

    def put(self, key, value, size: int = 1) -> None:
        value.key = key
        super().put(key, value, size)

    def _added(self, value: "TextEntry") -> None:
        length = len(value.text)
        self._lengths[length] = self._lengths.get(length, 0) + 1

    def _removed(self, value: "TextEntry") -> None:
        length = len(value.text)
        left = self._lengths[length] - 1
        if left:
            self._lengths[length] = left
        else:
            del self._lengths[length]

    def _cleared(self) -> None:
        self._lengths.clear()


class TextEntry:
    """One L0 entry: the text, its ids, and its token strings and offsets once read."""

    __slots__ = ("text", "ids", "tokens", "offsets", "key")

    def __init__(self, text: str, ids: tuple):
        self.text = text
        self.ids = ids
        self.tokens = None
        self.offsets = None
        self.key = None


def _text_key(fingerprint: bytes, text: str, add_special_tokens: bool, parse_special: bool) -> tuple:
    return (fingerprint, add_special_tokens, parse_special, len(text), text[:_KEY_CHARS], text[-_KEY_CHARS:])


# characters of a text's head and tail in its key
_KEY_CHARS = 32
# an entry beyond its payload: the entry object, the key tuple with its two strings and two
# ints (length, size), the (entry, size) pair, and two slots in the LRU map
_ENTRY_OVERHEAD = (sys.getsizeof(TextEntry("", ())) + sys.getsizeof((b"", True, True, 1, "", ""))
                   + 2 * sys.getsizeof("x" * _KEY_CHARS) + 2 * INT_BYTES + sys.getsizeof((None, 1)) + 2 * 104)
