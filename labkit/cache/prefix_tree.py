"""L1's store: a tree of text segments cut at safe special tokens, bounded by measured bytes.

A node stands for one prefix of a prompt that ends at a cut point. It keeps the text it
adds to its parent (its *segment*) and the ids of that segment, so a conversation that
grows turn by turn shares its earlier turns. The segment's token strings and offsets are
filled in only when a caller first reads them (most callers want ids only): the segment is
encoded again on its own, its ids must equal the stored ones, and the node is charged for
what it now keeps.

Looking up a prompt walks down from the tokenizer's root without scanning the text for
cut points: a child is found by its segment's first characters and length, then confirmed
by comparing the text in place (``str.startswith`` at an offset, no slicing and no hashing
of the prefix). A segment ends at a cut and holds no other cut, and safe spellings never
overlap, so a segment that matches in place ends at the prompt's own next cut: the walk
takes exactly the path that cutting the prompt first would take. A hit is exact.

Eviction is least-recently-used over nodes and removes a node with everything below it, so
nothing unreachable stays alive. A lookup touches the path from the deepest node up, so a
parent is always more recent than its children and eviction takes leaves first.
Introduced in notebook ``10_cache_boundaries``.

Example (one segment stored below a tokenizer's root, then found again as a prefix):
    >>> from labkit.cache.prefix_tree import PrefixTree
    >>> tree = PrefixTree(max_bytes=2**20)
    >>> text = "<|im_start|>system\\nBe brief.<|im_end|>\\n<|im_start|>user\\nHi"
    >>> node, charged = tree.add(tree.root(b"qwen2"), text, text.index("<|im_end|>"), (1, 2, 3), allowance=2**20)
    >>> found, depth = tree.longest(b"qwen2", text, lambda text, position: None)
    >>> found is node, depth, found.ids, tree.stats()["hits"]
    (True, 0, (1, 2, 3), 1)
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict

from labkit.cache.lru import ADMIT_AFTER, ADMIT_ONE_IN, level_stats, rarely_found
from labkit.cache.sizes import INT_BYTES, ids_bytes, tokens_offsets_bytes
from labkit.core import LabkitError

# characters of a segment's head and tail in a child's key (the rest is compared in place):
# enough to reach past a chat turn's framing (Llama-3's is 44 characters) into its message,
# so a new message's head is found in no child and the walk stops without scanning for a cut
_KEY_CHARS = 64
# a head shared by more child lengths than this: the next cut is found by scanning instead
_LENGTHS_TRIED = 8


class PrefixNode:
    """One cached prefix: its segment and what the segment encodes to, below ``parent``.
    ``tokens`` and ``offsets`` (absolute in the prompt) stay None until first read."""

    __slots__ = ("parent", "segment", "ids", "tokens", "offsets", "length", "end", "children", "lengths",
                 "short", "single", "added", "reused", "declined", "hits", "prefix", "size", "attached", "__weakref__")

    def __init__(self, parent, segment, ids, length, end):
        self.parent = parent
        self.segment = segment
        self.ids = ids
        self.tokens = None
        self.offsets = None
        self.length = length  # tokens in the whole prefix
        self.end = end  # characters in the whole prefix
        self.children: dict | None = None  # (head, length, tail) -> [PrefixNode]
        self.lengths: dict | None = None  # head -> {segment length: children with that head and length}
        self.short: dict | None = None  # {segment length: children} for segments shorter than a key
        self.single: dict | None = None  # head -> the child, for a head only one child has
        self.added = 0  # children stored below it
        self.reused = 0  # lookups that went on to one of its children
        self.declined = 0  # new children it was not given
        self.hits = 0  # lookups that ended here
        self.prefix: list | None = None  # the ids of the whole prefix, once it is hit again
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
    return (text[start : start + _KEY_CHARS], end - start, text[max(start, end - _KEY_CHARS) : end])


def _count(counts: dict, length: int, change: int) -> None:
    """Add ``change`` to a count of segment lengths, dropping a length that falls to zero."""
    left = counts.get(length, 0) + change
    if left:
        counts[length] = left
    else:
        del counts[length]


# what a node costs beyond its payload: the object, its key tuple and strings, its ints (end,
# length, size, the key's length, a count), one slot in the LRU map, one in its parent's
# children map (a list of one), and a lengths map of its own head with its slot (checked
# with tracemalloc in tests/test_hostile_cache.py)
_NODE_OVERHEAD = (sys.getsizeof(PrefixNode(None, "", (), 0, 0)) + sys.getsizeof(("", 1, ""))
                  + 2 * sys.getsizeof("x" * _KEY_CHARS) + 5 * INT_BYTES + sys.getsizeof([None])
                  + sys.getsizeof({1: 1}) + 3 * 104)


class PrefixTree:
    """Segment tree for L1: one root per tokenizer fingerprint, LRU eviction by bytes.

    ``max_entry`` caps what one node may take and ``max_per_request`` what one request may
    add, so a single huge prompt cannot flush the cache. Once a node has ``admit_after``
    children and fewer than 1 in ``ADMIT_ONE_IN`` lookups through it went on to one of them
    (a long policy prompt followed by ever new questions), it takes 1 new child in
    ``ADMIT_ONE_IN``: storing the others would cost every request and serve none.

    Example:
        >>> from labkit.cache.prefix_tree import PrefixTree
        >>> PrefixTree(max_bytes=2**20).stats()["bytes"]
        0
    """

    def __init__(self, *, max_bytes: int, max_entry: int | None = None, max_per_request: int | None = None,
                 admit_after: int | None = ADMIT_AFTER):
        self.max_bytes = max_bytes
        self.admit_after = admit_after
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
                node = self._roots[fingerprint] = PrefixNode(None, "", (), 0, 0)
            return node

    def longest(self, fingerprint: bytes, text: str, next_cut) -> tuple[PrefixNode | None, int]:
        """The deepest cached node on the path of ``text`` and its depth (0 for the first
        cut; -1 if none). ``next_cut(text, position)`` gives the cut after a position; it is
        called only when a head is shared by many segment lengths. Counts one hit or one miss."""
        with self._lock:
            node = self._roots.get(fingerprint)
            found, depth, position = None, -1, 0
            while node is not None and node.children:
                child = self._child_at(node, text, position, next_cut)
                if child is None:
                    break
                node.reused += 1
                node = found = child
                depth += 1
                position = child.end
            if found is None:
                self.misses += 1
                return None, -1
            self.hits += 1
            found.hits += 1
            self._touch(found)
            return found, depth

    @staticmethod
    def _child_at(node: PrefixNode, text: str, position: int, next_cut) -> PrefixNode | None:
        """The child whose segment the text continues with at ``position``, if any."""
        head = text[position : position + _KEY_CHARS]
        child = node.single.get(head)
        if child is not None:  # the one child with this head (the common case): no key to build
            if text.startswith(child.segment, position):
                return child
            lengths = None
        else:
            lengths = node.lengths.get(head)
        if lengths is not None:
            if len(lengths) > _LENGTHS_TRIED:  # many segments share this head: find the length by scanning
                cut = next_cut(text, position)
                # a length no child has is a miss without building a key
                lengths = (cut - position,) if cut is not None and cut - position in lengths else ()
            children = node.children
            for length in lengths:
                end = position + length
                for candidate in children.get((head, length, text[max(position, end - _KEY_CHARS) : end]), ()):
                    if text.startswith(candidate.segment, position):
                        return candidate
        short = node.short
        if short is not None:  # a segment shorter than the key is its own head
            if len(short) > _LENGTHS_TRIED:  # many short lengths: find the one by scanning
                cut = next_cut(text, position)
                short = (cut - position,) if cut is not None and cut - position in short else ()
            for length in short:
                piece = text[position : position + length]
                for candidate in node.children.get((piece, length, piece), ()):
                    return candidate  # its key holds the whole segment
        return None

    def admits(self, parent: PrefixNode) -> bool:
        """Whether a new child should be stored below ``parent`` (see the class docstring)."""
        if not rarely_found(parent.added, parent.reused, self.admit_after):
            return True
        parent.declined += 1
        return parent.declined % ADMIT_ONE_IN == 0

    def add(self, parent: PrefixNode, text: str, cut: int, ids: tuple, allowance: int) -> tuple[PrefixNode | None, int]:
        """Store the segment text[parent.end:cut] with its ids below ``parent``; returns the
        node (None if refused: too large, over the request's ``allowance``, or the parent was
        evicted) and the bytes it was charged."""
        start = parent.end
        segment = text[start:cut]
        size = _NODE_OVERHEAD + sys.getsizeof(segment) + ids_bytes(ids)
        with self._lock:
            if size > self.max_entry or size > allowance or not parent.attached:
                self.refused += 1
                return None, 0
            key = _key(text, start, cut)
            if parent.children is None:
                parent.children, parent.lengths, parent.single = {}, {}, {}
            siblings = parent.children.get(key)
            for existing in siblings or ():
                if existing.segment == segment:  # another thread stored it first
                    self._touch(existing)
                    return existing, 0
            node = PrefixNode(parent, segment, ids, parent.length + len(ids), cut)
            node.size = size
            parent.added += 1
            if siblings is None:
                parent.children[key] = [node]
            else:
                siblings.append(node)
            if key[0] in parent.lengths:
                parent.single.pop(key[0], None)  # a second child with this head: found by its key
            else:
                parent.single[key[0]] = node
            _count(parent.lengths.setdefault(key[0], {}), key[1], +1)
            if key[1] < _KEY_CHARS:
                if parent.short is None:
                    parent.short = {}
                _count(parent.short, key[1], +1)
            self._lru[node] = None
            self.bytes += size
            self._touch(node)
            self._evict_past_budget()
            return (node if node.attached else None), size

    def prefix_ids(self, node: PrefixNode) -> list[int]:
        """The ids from the first cut to the end of ``node``, as one list (do not change it).
        From a node's second hit on, the list is kept (and charged: the ints are the links'
        own), so a hit copies one list instead of joining its chain.

        Example:
            >>> from labkit.cache.prefix_tree import PrefixTree
            >>> tree = PrefixTree(max_bytes=2**20)
            >>> first, _ = tree.add(tree.root(b"fp"), "ab", 1, (1,), 2**20)
            >>> second, _ = tree.add(first, "ab", 2, (2, 3), 2**20)
            >>> tree.prefix_ids(second)
            [1, 2, 3]
        """
        ids = node.prefix
        if ids is not None:
            return ids
        ids = []
        for link in node.chain():
            ids += link.ids
        if node.hits > 1:
            extra = sys.getsizeof(ids)
            with self._lock:
                if node.prefix is None and node.attached and node.size + extra <= self.max_entry:
                    node.prefix = ids
                    node.size += extra
                    self.bytes += extra
                    self._evict_past_budget()
        return ids

    def filled(self, node: PrefixNode, encode) -> tuple[tuple, tuple]:
        """The node's token strings and absolute offsets, made on first need by
        ``encode(segment)`` (an Encoding of the segment alone); kept, and charged, if the node
        is still in the tree and within its share."""
        tokens, offsets = node.tokens, node.offsets
        if tokens is not None:
            return tokens, offsets
        enc = encode(node.segment)
        if tuple(enc.ids) != node.ids:
            raise LabkitError(f"cache: the segment ending at character {node.end} encodes on its own to other ids "
                              f"than in its prompt; its special token is not a safe cut for this tokenizer")
        start = node.end - len(node.segment)
        tokens = tuple(enc.tokens)
        offsets = tuple([(s + start, e + start) for s, e in enc.offsets])
        extra = tokens_offsets_bytes(tokens, offsets)
        with self._lock:
            if node.tokens is None and node.attached and node.size + extra <= self.max_entry:
                node.tokens, node.offsets = tokens, offsets
                node.size += extra
                self.bytes += extra
                self._evict_past_budget()
        return tokens, offsets

    # -- inside the lock -------------------------------------------------------
    def _touch(self, node: PrefixNode) -> None:
        """Most recent: the node, then each ancestor (so parents outlive their children)."""
        move_to_end = self._lru.move_to_end
        while node.parent is not None:
            try:
                move_to_end(node)
            except KeyError:  # a node being stored is not in the map yet
                pass
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
                if parent.single.get(key[0]) is node:
                    del parent.single[key[0]]
                lengths = parent.lengths[key[0]]
                _count(lengths, key[1], -1)
                if not lengths:
                    del parent.lengths[key[0]]
                if key[1] < _KEY_CHARS:
                    _count(parent.short, key[1], -1)
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
                current.children = current.lengths = current.short = current.single = None

    def clear(self) -> None:
        with self._lock:
            for node in list(self._lru):
                node.attached = False
                node.children = node.lengths = node.short = node.single = None
            self._lru.clear()
            for root in self._roots.values():
                root.children = root.lengths = root.short = root.single = None
            # new roots: a root's counts (children added, reuses) decide what it admits next
            self._roots.clear()
            self.bytes = 0

    # len and stats as the L0 level has them (cache/lru.py): both levels answer CachedTokenizer alike
    def __len__(self) -> int:
        return len(self._lru)

    def stats(self) -> dict[str, float]:
        with self._lock:
            return level_stats(self, len(self._lru))
