"""L1's store: a tree of text segments cut at safe special tokens, bounded by measured bytes.

A node stands for one prefix of a prompt that ends at a cut point. It keeps the text it
adds to its parent (its *segment*) and the ids, tokens and offsets of that segment, so a
conversation that grows turn by turn shares its earlier turns. Looking up a prompt walks
down from the tokenizer's root, one cut at a time: a child is found by the segment's length
and its first and last characters, then confirmed by comparing the text in place
(``str.startswith`` at an offset, no slicing and no hashing of the whole prefix). A hit is
therefore exact: never a digest collision.

Eviction is least-recently-used over nodes and removes a node with everything below it, so
nothing unreachable stays alive. A lookup touches the path from the deepest node up, so a
parent is always more recent than its children and eviction takes leaves first.
Introduced in notebook ``10_cache_boundaries``.

Example: ``tree = PrefixTree(max_bytes=8 * 2**20); node, depth = tree.longest(fp, text, cuts)``
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict

from labkit.cache.sizes import encoding_bytes

# characters of a segment's head and tail in a child's key (the rest is compared in place)
_KEY_CHARS = 16


class PrefixNode:
    """One cached prefix: its segment and what the segment encodes to, below ``parent``."""

    __slots__ = ("parent", "segment", "ids", "tokens", "offsets", "length", "end", "children", "size", "attached",
                 "__weakref__")

    def __init__(self, parent, segment, ids, tokens, offsets, length, end):
        self.parent = parent
        self.segment = segment
        self.ids = ids
        self.tokens = tokens
        self.offsets = offsets
        self.length = length  # tokens in the whole prefix
        self.end = end  # characters in the whole prefix
        self.children: dict | None = None
        self.size = 0
        self.attached = True

    def chain(self) -> list["PrefixNode"]:
        """The nodes from the first cut down to this one (the root left out)."""
        nodes, node = [], self
        while node.parent is not None:
            nodes.append(node)
            node = node.parent
        nodes.reverse()
        return nodes


def _key(text: str, start: int, end: int) -> tuple:
    return (end - start, text[start : start + _KEY_CHARS], text[max(start, end - _KEY_CHARS) : end])


# what a node costs beyond its payload: the object, its key tuple and strings, one slot in
# the LRU map and one in its parent's children map (a list of one)
_NODE_OVERHEAD = (sys.getsizeof(PrefixNode(None, "", (), (), (), 0, 0)) + sys.getsizeof((1, "", ""))
                  + 2 * sys.getsizeof("x" * _KEY_CHARS) + sys.getsizeof(2**20) + sys.getsizeof([None])
                  + 2 * 104)


class PrefixTree:
    """Segment tree for L1: one root per tokenizer fingerprint, LRU eviction by bytes.

    ``max_entry`` caps what one node may take and ``max_per_request`` what one request may
    add, so a single huge prompt cannot flush the cache.

    Example:
        >>> from labkit.cache.prefix_tree import PrefixTree
        >>> PrefixTree(max_bytes=2**20).stats()["bytes"]
        0
    """

    def __init__(self, *, max_bytes: int, max_entry: int | None = None, max_per_request: int | None = None):
        self.max_bytes = max_bytes
        self.max_entry = max_entry if max_entry is not None else max(1, max_bytes // 8)
        self.max_per_request = max_per_request if max_per_request is not None else max(1, max_bytes // 8)
        self._roots: dict[bytes, PrefixNode] = {}
        self._lru: OrderedDict[PrefixNode, None] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.refused = 0

    def root(self, fingerprint: bytes) -> PrefixNode:
        with self._lock:
            node = self._roots.get(fingerprint)
            if node is None:
                node = self._roots[fingerprint] = PrefixNode(None, "", (), (), (), 0, 0)
            return node

    def longest(self, fingerprint: bytes, text: str, cuts: list[int]) -> tuple[PrefixNode | None, int]:
        """The deepest cached node on the path of ``text`` and the index of its cut (-1 if none).
        Counts one hit or one miss."""
        with self._lock:
            node = self._roots.get(fingerprint)
            found, depth, position = None, -1, 0
            for index, cut in enumerate(cuts):
                children = node.children if node is not None else None
                if not children:
                    break
                child = None
                for candidate in children.get(_key(text, position, cut), ()):
                    if text.startswith(candidate.segment, position):
                        child = candidate
                        break
                if child is None:
                    break
                node, found, depth, position = child, child, index, cut
            if found is None:
                self.misses += 1
                return None, -1
            self.hits += 1
            self._touch(found)
            return found, depth

    def add(self, parent: PrefixNode, text: str, cut: int, ids: tuple, tokens: tuple, offsets: tuple,
            allowance: int) -> tuple[PrefixNode | None, int]:
        """Store the segment text[parent.end:cut] below ``parent``; returns the node (None if
        refused: too large, over the request's ``allowance``, or the parent was evicted) and
        the bytes it was charged."""
        start = parent.end
        segment = text[start:cut]
        size = _NODE_OVERHEAD + sys.getsizeof(segment) + encoding_bytes(ids, tokens, offsets)
        with self._lock:
            if size > self.max_entry or size > allowance or not parent.attached:
                self.refused += 1
                return None, 0
            key = _key(text, start, cut)
            children = parent.children
            if children is None:
                children = parent.children = {}
            for existing in children.get(key, ()):
                if existing.segment == segment:  # another thread stored it first
                    self._touch(existing)
                    return existing, 0
            node = PrefixNode(parent, segment, ids, tokens, offsets, parent.length + len(ids), cut)
            node.size = size
            children.setdefault(key, []).append(node)
            self._lru[node] = None
            self.bytes += size
            self._touch(node)
            self._evict_past_budget()
            return (node if node.attached else None), size

    # -- inside the lock -------------------------------------------------------
    def _touch(self, node: PrefixNode) -> None:
        """Most recent: the node, then each ancestor (so parents outlive their children)."""
        while node.parent is not None:
            if node in self._lru:
                self._lru.move_to_end(node)
            node = node.parent

    def _evict_past_budget(self) -> None:
        while self.bytes > self.max_bytes and self._lru:
            oldest = next(iter(self._lru))
            self._detach(oldest)

    def _detach(self, node: PrefixNode) -> None:
        """Remove a node and everything below it."""
        parent = node.parent
        if parent is not None and parent.children:
            key = _key(node.segment, 0, len(node.segment))
            siblings = parent.children.get(key)
            if siblings is not None:
                siblings[:] = [s for s in siblings if s is not node]
                if not siblings:
                    del parent.children[key]
        stack = [node]
        while stack:
            current = stack.pop()
            if current in self._lru:
                del self._lru[current]
                self.bytes -= current.size
                self.evictions += 1
            current.attached = False
            if current.children:
                for group in current.children.values():
                    stack.extend(group)
                current.children = None

    def clear(self) -> None:
        with self._lock:
            for node in list(self._lru):
                node.attached = False
                node.children = None
            self._lru.clear()
            for root in self._roots.values():
                root.children = None
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._lru)

    def stats(self) -> dict[str, float]:
        with self._lock:
            lookups = self.hits + self.misses
            return {
                "hits": self.hits,
                "misses": self.misses,
                "hit_rate": self.hits / lookups if lookups else 0.0,
                "entries": len(self._lru),
                "bytes": self.bytes,
                "evictions": self.evictions,
                "refused": self.refused,
            }
