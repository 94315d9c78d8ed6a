"""Rank BPE on one pre-token: repeatedly merge the adjacent pair with the lowest rank.

A word starts as a list of parts (its UTF-8 bytes, one part each). At every step the pair of
neighbours whose merge has the lowest rank is joined; among equal ranks the leftmost pair
wins (GPT-2, ``tokenizers``, tiktoken and llama.cpp all agree on this). When no adjacent
pair has a rank the word is done. Where the rank comes from depends on the vocabulary:

* a merges list (``merges.txt``, GGUF ``tokenizer.ggml.merges``): the rank of pair
  ``(a, b)`` is the index of the line ``a b`` (:func:`pair_ranker`);
* a tiktoken file: the rank of ``(a, b)`` is the rank of the token ``a + b``
  (:func:`concat_ranker`) -- tiktoken has no merges, only token ranks.

Two implementations, same result:

* :func:`bpe_naive` rescans every pair after each merge: O(n²) per word, easy to read;
* :func:`bpe_heap` keeps candidate pairs in a heap over a doubly-linked list of parts and
  discards stale entries when they surface: O(n log n). The engine uses this one.

Long words run the same merges over token ids (:func:`bpe_rank_buckets`: one list of
positions per merge and a small heap of merges) and in chunks cut where no merge can join
the two sides (:func:`bpe_rank_chunks`).

Both can record a :class:`MergeTrace` (each step: position, pair, rank, new part) that
``labkit.viz.merges`` draws. Introduced in notebook ``02_bpe_byte_level``.

Example:
    >>> from labkit.algorithms.bpe import bpe_heap, pair_ranker
    >>> bpe_heap([b"l", b"o", b"w"], pair_ranker({(b"l", b"o"): 0, (b"lo", b"w"): 1}))
    [b'low']
"""
from __future__ import annotations

import heapq
from bisect import insort
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, compress, repeat
from operator import is_, lshift, or_
from typing import Callable, Iterable, Mapping, Optional, Sequence

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.merge_step import MergeStep
from labkit.core import LabkitError

Ranker = Callable[[bytes, bytes], Optional[int]]


def pair_ranker(ranks: Mapping[tuple[bytes, bytes], int]) -> Ranker:
    """A rank function from a merges table ``{(left, right): rank}``.

    Example:
        >>> from labkit.algorithms.bpe import pair_ranker
        >>> pair_ranker({(b"a", b"b"): 0})(b"a", b"b")
        0

    Introduced in notebook ``02_bpe_byte_level``.
    """
    get = ranks.get
    return lambda a, b: get((a, b))


def concat_ranker(ranks: Mapping[bytes, int]) -> Ranker:
    """A rank function from tiktoken-style token ranks ``{token_bytes: rank}``: a pair's rank
    is the rank of the token it would make.

    Example:
        >>> from labkit.algorithms.bpe import concat_ranker
        >>> concat_ranker({b"ab": 256})(b"a", b"b")
        256

    Introduced in notebook ``02_bpe_byte_level``.
    """
    get = ranks.get
    return lambda a, b: get(a + b)


@dataclass
class MergeTrace:
    """Every merge BPE made on one word, in order, plus the start and final parts.

    Introduced in notebook ``02_bpe_byte_level``; drawn by ``labkit.viz.merges``.

    Example:
        >>> trace = MergeTrace()
        >>> bpe_heap([b"l", b"o", b"w"], concat_ranker({b"lo": 256, b"low": 257}), trace=trace)
        [b'low']
        >>> [(step.left, step.right) for step in trace.steps], trace.initial, trace.final
        ([(b'l', b'o'), (b'lo', b'w')], (b'l', b'o', b'w'), (b'low',))
    """

    initial: tuple[bytes, ...] = ()
    steps: list[MergeStep] = field(default_factory=list)
    final: tuple[bytes, ...] = ()

    def __len__(self) -> int:
        return len(self.steps)


def _check_parts(parts: Iterable[bytes]) -> list[bytes]:
    out = list(parts)
    for i, p in enumerate(out):
        if not isinstance(p, (bytes, bytearray)) or not p:
            raise LabkitError(f"bpe: part {i} must be non-empty bytes, got {p!r}")
    return [bytes(p) for p in out]


def bpe_naive(parts: Sequence[bytes], rank: Ranker, *, trace: MergeTrace | None = None) -> list[bytes]:
    """Merge the lowest-rank adjacent pair until none is left, rescanning every pair each
    step (O(n²) per word, the textbook loop).

    Example:
        >>> from labkit.algorithms.bpe import bpe_naive, concat_ranker
        >>> bpe_naive(list(map(bytes, [[104], [105]])), concat_ranker({b"hi": 300}))
        [b'hi']

    Introduced in notebook ``02_bpe_byte_level``.
    """
    parts = _check_parts(parts)
    if trace is not None:
        trace.initial = tuple(parts)
    step = 0
    while len(parts) > 1:
        best_rank = None
        best_pos = -1
        for i in range(len(parts) - 1):
            r = rank(parts[i], parts[i + 1])
            # strictly lower: on a tie the leftmost pair (found first) stays
            if r is not None and (best_rank is None or r < best_rank):
                best_rank, best_pos = r, i
        if best_rank is None:
            break
        merged = parts[best_pos] + parts[best_pos + 1]
        if trace is not None:
            trace.steps.append(MergeStep(step, best_pos, parts[best_pos], parts[best_pos + 1], merged,
                                         rank=best_rank, parts_before=tuple(parts)))
        parts[best_pos : best_pos + 2] = [merged]
        step += 1
    if trace is not None:
        trace.final = tuple(parts)
    return parts


def bpe_heap(parts: Sequence[bytes], rank: Ranker, *, trace: MergeTrace | None = None) -> list[bytes]:
    """The same merges as :func:`bpe_naive` in O(n log n): candidate pairs wait in a heap
    keyed (rank, original index of the left part); parts form a doubly-linked list, and a
    popped pair whose parts have changed since it was pushed is skipped.

    Example:
        >>> from labkit.algorithms.bpe import bpe_heap, concat_ranker
        >>> bpe_heap([b"a", b"a", b"a"], concat_ranker({b"aa": 0}))
        [b'aa', b'a']

    Introduced in notebook ``02_bpe_byte_level``.
    """
    if trace is not None:
        parts = _check_parts(parts)
        trace.initial = tuple(parts)
    sym = list(parts)
    n = len(sym)
    if n < 2:
        if trace is not None:
            trace.final = tuple(sym)
        return sym
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    heap = []
    for i in range(n - 1):
        r = rank(sym[i], sym[i + 1])
        if r is not None:
            heap.append((r, i, sym[i], sym[i + 1]))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    step = 0
    while heap:
        r, i, a, b = pop(heap)
        j = nxt[i]
        # stale: the left part changed, or its right neighbour is no longer `b`
        if sym[i] is not a or j < 0 or sym[j] is not b:
            continue
        merged = a + b
        if trace is not None:
            live = [sym[k] for k in _walk(nxt, 0)]
            position = sum(1 for _ in _walk(nxt, 0, stop=i))
            trace.steps.append(MergeStep(step, position, a, b, merged, rank=r, parts_before=tuple(live)))
            step += 1
        sym[i] = merged
        sym[j] = None
        k = nxt[j]
        nxt[i] = k
        if k >= 0:
            prv[k] = i
            r2 = rank(merged, sym[k])
            if r2 is not None:
                push(heap, (r2, i, merged, sym[k]))
        p = prv[i]
        if p >= 0:
            r2 = rank(sym[p], merged)
            if r2 is not None:
                push(heap, (r2, p, sym[p], merged))
    out = [sym[k] for k in _walk(nxt, 0)]
    if trace is not None:
        trace.final = tuple(out)
    return out


# ids at the top of the 24-bit id space belong to the bucket loops, never to a vocabulary:
NO_TOKEN = 0xFFFFFF  # what a merge makes whose bytes are no token (the caller falls back to bytes)
_BEFORE_FIRST = 0xFFFFFD  # the stand-in left of a word's first part (never merges)
_AFTER_LAST = 0xFFFFFE  # the stand-in right of its last part (never merges)
FIRST_LOOP_ID = _BEFORE_FIRST  # a vocabulary with this many ids or more cannot merge over ids


def bpe_rank_buckets(ids: list[int], known: dict[int, int], pair: Callable[[int, int], int],
                     made: list[int] | None = None, *, ties: bool = False) -> list[int] | None:
    """:func:`bpe_heap` over token ids for long words: the same merges, in buckets.

    A long word has many pairs but few distinct merges, so instead of one heap of every pair
    this keeps one list of positions per merge and a small heap of the merges. The lowest
    one's positions merge left to right. A merge that makes a pair of a *lower* rank stops
    the bucket so the lower one goes first, exactly as the one-heap loop would.

    What merging ids ``a`` and ``b`` makes is ``known[(a << 24) | b]`` when present (a memo
    ``pair`` fills): ``(rank << 24) | new_id``, or -1 for no merge. A merge whose bytes are
    not a token makes :data:`NO_TOKEN`; if one happens this returns None and the caller runs
    :func:`bpe_heap` on bytes. ``made[i]`` is what the pair now starting at ``i`` makes: a
    queued position whose pair has changed is stale and skipped. A caller that knows what
    the word's first pairs make faster than the memo (byte-level BPE: from a table of byte
    pairs) may pass them as ``made``. Ids from :data:`FIRST_LOOP_ID` up are the loop's own.

    Where each rank is one merge (byte-level BPE, and SentencePiece models whose merged
    pieces each have a score of their own), a bucket holds one merge's positions
    (:func:`_merge_in_value_buckets`). Where merges making different pieces share a rank
    (SentencePiece's equal scores: Llama's runs of ``▁``), their pairs still merge left to
    right among themselves: ``ties=True`` keeps one bucket per rank instead
    (:func:`_merge_in_rank_buckets`; rank = place of the score in
    :meth:`~labkit.algorithms.spm_bpe.SpmBpeModel.merge_buckets`).

    Example:
        >>> from labkit.algorithms.bpe import bpe_rank_buckets
        >>> bpe_rank_buckets([71, 72], {}, lambda a, b: 300)
        [300]
    """
    if len(ids) < 2:
        return list(ids)
    sym = _bucket_loop(ties)(ids, known, pair, made=made)
    return None if sym is None else _left(sym)


def _first_pairs_make(sym: list[int], n: int, known: dict[int, int], pair: Callable[[int, int], int],
                      made: list[int] | None) -> list[int]:
    """What each pair of the word's ``n`` first parts makes: the caller's ``made``, or read
    from the memo; each distinct pair neither knows is asked once (a long word repeats them).

    Example:
        >>> asked = []
        >>> _first_pairs_make([1, 2, 1, 2], 4, {}, lambda a, b: asked.append((a, b)) or -1, None), sorted(asked)
        ([-1, -1, -1], [(1, 2), (2, 1)])
    """
    if made is None:
        made = list(map(known.get, map(or_, map(lshift, sym, repeat(24, n - 1)), sym[1:n])))  # in C: one pass
    else:
        made = list(made)  # the caller's list stays as it was
    if None in made:
        keys = list(map(or_, map(lshift, sym, repeat(24, n - 1)), sym[1:n]))
        unknown = set(compress(keys, map(is_, made, repeat(None))))
        asked = {key: pair(key >> 24, key & 0xFFFFFF) for key in unknown}
        made = list(map(asked.get, keys, made))  # in C: an asked pair's answer, else what was known
    return made


def _bucket_loop(ties: bool) -> Callable:
    """The loop for ranks that may tie between different merges (SentencePiece) or not."""
    return _merge_in_rank_buckets if ties else _merge_in_value_buckets


def _left(sym: list[int]) -> list[int]:
    """The parts left by the bucket loop, in order: those not merged away (-1)."""
    return list(filter((0).__le__, sym))  # in C: keeps each part >= 0


def _merge_in_value_buckets(ids: list[int], known: dict[int, int], pair: Callable[[int, int], int],
                            edges: list | None = None, made: list[int] | None = None) -> list[int] | None:
    """The loop of :func:`bpe_rank_buckets` where each rank is one merge: the parts once no
    pair merges, each at the position of its first byte, -1 at the positions merged into a
    part on their left; None when a merge's bytes are not a token. A bucket holds the
    positions of one merge value ``(rank << 24) | new_id``, so the bucket's key tells what a
    merge makes and whether a queued position is stale. With ``edges`` (a list), each merge
    that changes the first or the last part is recorded there as ``(first?, last?, rank,
    new id)``, and None is returned as soon as a merge makes a pair of a lower rank than its
    own (what :func:`bpe_rank_chunks` cannot cut). ``made``: what the pairs of ``ids`` make,
    if known."""
    n = len(ids)
    # stand-ins past both ends (sym[n] after the last part, sym[n + 1] before the first): every
    # part has two neighbours, so the hot loop tests no end
    sym = [*ids, _AFTER_LAST, _BEFORE_FIRST]
    made = _first_pairs_make(sym, n, known, pair, made)
    made += (-1, -1, -1)  # the pairs last part + stand-in, and the two stand-ins'
    nxt = [*range(1, n + 1), -1, 0]
    prv = [n + 1, *range(n), -1]
    buckets: dict[int, list[int]] = {}
    for i, v in enumerate(made):
        if v >= 0:
            bucket = buckets.get(v)
            if bucket is None:
                buckets[v] = [i]
            else:
                bucket.append(i)
    keys = list(buckets)
    heapq.heapify(keys)
    push, pop = heapq.heappush, heapq.heappop
    # a bucket set aside part-way (a merge made a pair that goes first) -> where its walk goes on
    resume: dict[int, int] = {}

    def ask(left: int, right: int) -> int:
        """What a pair the memo does not know makes. A stand-in or NO_TOKEN never merges, and a
        part meeting a stand-in is a new first or last part (asked once per merge: never memoised)."""
        if left < FIRST_LOOP_ID and right < FIRST_LOOP_ID:
            return pair(left, right)
        if edges is not None:
            if left == _BEFORE_FIRST:
                edges.append((True, False, key >> 24, right))
            elif right == _AFTER_LAST:
                edges.append((False, True, key >> 24, left))
        return -1

    while keys:
        key = keys[0]
        positions = buckets[key]  # ascending: filed in order, or put in place (insort) when late
        walk = iter(positions)
        if resume and key in resume:
            walk.__setstate__(resume.pop(key))  # on from where it was set aside: O(1), no copy
        merged = key & 0xFFFFFF
        merged_left = merged << 24  # the pair (merged, right) is known[merged_left | right]
        for i in walk:
            if made[i] != key:
                continue  # stale: the pair at i changed since it was queued (or merged away: -1)
            j = nxt[i]
            sym[i] = merged
            sym[j] = made[j] = -1
            k = nxt[j]
            nxt[i] = k
            prv[k] = i
            # the two new pairs below are filed by the same inlined lines on purpose: a helper
            # call per merge costs more than the bucket work it would hold (the hot loop)
            right = sym[k]
            try:  # a subscript costs less than a .get call; a miss is rare once the memo is warm
                v = known[merged_left | right]
            except KeyError:
                v = ask(merged, right)
            made[i] = v
            if v >= 0:  # the new pair (merged, right neighbour) at i
                if v <= key:  # it merges before the rest of this bucket, which waits
                    if v < key and edges is not None:
                        return None
                    _set_aside(resume, key, walk, positions)
                bucket = buckets.get(v)
                if bucket is None:
                    buckets[v] = [i]
                    push(keys, v)
                elif v in resume:
                    _file_in_set_aside(bucket, resume, v, i)
                else:
                    insort(bucket, i)
            p = prv[i]
            left = sym[p]
            try:
                v = known[(left << 24) | merged]
            except KeyError:
                v = ask(left, merged)
            made[p] = v
            if v >= 0:  # the new pair (left neighbour, merged) at p
                if v <= key:
                    if v < key and edges is not None:
                        return None
                    _set_aside(resume, key, walk, positions)
                bucket = buckets.get(v)
                if bucket is None:
                    buckets[v] = [p]
                    push(keys, v)
                elif v in resume:
                    _file_in_set_aside(bucket, resume, v, p)
                else:
                    insort(bucket, p)
        if key not in resume:  # every position done (else the rest waits for its turn)
            del buckets[key]
            pop(keys)
    del sym[n:]
    return None if NO_TOKEN in sym else sym


def _set_aside(resume: dict[int, int], key: int, walk, positions: list[int]) -> None:
    """The positions of ``key`` after the current one wait for the bucket's next turn (a new
    pair must merge first): where the walk stands is remembered and the walk ends after the
    current position. O(1), so a bucket set aside at every merge stays linear. Once per merge:
    a second call finds the bucket already set aside."""
    if key not in resume:
        resume[key] = walk.__reduce__()[2]  # the index of the next position
        walk.__setstate__(len(positions))  # nothing more this turn


def _file_in_set_aside(bucket: list[int], resume: dict[int, int], key: int, position: int) -> None:
    """File ``position`` in a bucket set aside part-way: before every waiting position it takes
    the last slot already walked (those are spent), else its place among the waiting ones."""
    at = resume[key]
    if at and (at == len(bucket) or position <= bucket[at]):
        bucket[at - 1] = position
        resume[key] = at - 1
    else:
        insort(bucket, position, lo=at)


def _merge_in_rank_buckets(ids: list[int], known: dict[int, int], pair: Callable[[int, int], int],
                           edges: list | None = None, made: list[int] | None = None) -> list[int] | None:
    """:func:`_merge_in_value_buckets` for ranks that tie between merges making different ids
    (SentencePiece's equal scores): a bucket holds one *rank*'s positions, whatever they make,
    so they merge left to right. A merge that makes another pair of the same rank makes it
    left of every position still ahead, so it goes next."""
    n = len(ids)
    get = known.get
    sym = list(ids)
    # made[i]: what the pair now starting at i makes, (rank << 24) | new_id, or -1 (none / merged away)
    made = _first_pairs_make(sym, n, known, pair, made)
    made.append(-1)
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    buckets: dict[int, list[int]] = {}
    for i, v in enumerate(made):
        if v >= 0:
            r = v >> 24
            bucket = buckets.get(r)
            if bucket is None:
                buckets[r] = [i]
            else:
                bucket.append(i)
    ranks = list(buckets)
    # buckets whose list is not in walking order (descending): each at first, then each one a
    # later merge files into; a bucket set aside part-way stays in order, so it is not sorted again
    unsorted = set(ranks)
    heapq.heapify(ranks)
    push, pop = heapq.heappush, heapq.heappop

    def ask(left: int, right: int) -> int:  # NO_TOKEN never merges
        return -1 if left >= FIRST_LOOP_ID or right >= FIRST_LOOP_ID else pair(left, right)

    while ranks:
        rank = ranks[0]
        positions = buckets[rank]
        # the lowest position is popped from the end; a pair of this rank made by a merge starts
        # at or left of the merge, so filed at the end it comes next (the list stays descending)
        if rank in unsorted:
            positions.sort(reverse=True)
            unsorted.discard(rank)
        while positions:
            i = positions.pop()
            v = made[i]
            if v >> 24 != rank:
                continue  # stale: the pair at i changed since it was queued (or merged away: -1)
            j = nxt[i]
            sym[i] = merged = v & 0xFFFFFF
            sym[j] = made[j] = -1
            k = nxt[j]
            nxt[i] = k
            if edges is not None and (i == 0 or k < 0):
                edges.append((i == 0, k < 0, rank, merged))
            lowest = rank  # the lowest rank of the two new pairs, if lower than this one
            # the two new pairs below are filed by the same inlined lines on purpose: a helper
            # call per merge costs more than the bucket work it would hold (the hot loop)
            if k >= 0:  # the new pair (merged, right neighbour) at i
                prv[k] = i
                right = sym[k]
                v = get((merged << 24) | right)
                if v is None:
                    v = ask(merged, right)
                made[i] = v
                if v >= 0:
                    r = v >> 24
                    bucket = buckets.get(r)
                    if bucket is None:
                        buckets[r] = [i]
                        push(ranks, r)
                    else:
                        bucket.append(i)
                        unsorted.add(r)
                    if r < lowest:
                        lowest = r
            else:
                made[i] = -1
            p = prv[i]
            if p >= 0:  # the new pair (left neighbour, merged) at p, filed after the one at i > p
                v = get((sym[p] << 24) | merged)
                if v is None:
                    v = ask(sym[p], merged)
                made[p] = v
                if v >= 0:
                    r = v >> 24
                    bucket = buckets.get(r)
                    if bucket is None:
                        buckets[r] = [p]
                        push(ranks, r)
                    else:
                        bucket.append(p)
                        unsorted.add(r)
                    if r < lowest:
                        lowest = r
            if lowest < rank:
                if edges is not None:
                    return None
                break  # a lower rank appeared: it merges before the rest of this bucket, which waits
        else:
            del buckets[rank]
            pop(ranks)
    return None if NO_TOKEN in sym else sym


# a long word merges in chunks of about this many parts (a chunk's lists stay in the CPU's
# caches, the whole word's do not; fewer, longer chunks cost less per part: fewer ranks to
# visit per part, fewer cuts to place and check)
CHUNK_PARTS = 4096
# a word of at least twice this many parts is merged in at least two chunks
CHUNK_MIN_PARTS = 1024
# the distinct chunks of one word remembered at a time
CHUNK_MEMO_ENTRIES = 64
# the window BPE runs on around a planned cut to find where a token will likely end
_PROBE_PARTS = 16
_NEVER = 1 << 62  # the rank at which a final part is merged away: never


def bpe_rank_chunks(ids: list[int], known: dict[int, int], pair: Callable[[int, int], int],
                    made: list[int] | None = None, chunk: int = CHUNK_PARTS, *, ties: bool = False) -> list[int] | None:
    """:func:`bpe_rank_buckets` on a long word, chunk by chunk: the same ids, cut only where
    the merges provably never join the two sides.

    Merges on two sides of a cut run independently as long as no merge joins the part
    ending at the cut with the part starting there. Each chunk is merged on its own,
    recording the parts at its two ends over time: each lives from the rank of the merge
    that made it to the rank of the merge that takes it in (rank order is time, as long as
    no merge makes a pair of a lower rank than its own; a chunk that does is not cut). Two
    parts facing each other across a cut while both live would be joined unless their pair
    has no rank or its rank comes after one of them is gone; a cut where any pair might be
    joined is undone (the two chunks merge again as one). Cuts are placed where BPE on a
    small window around them ends a token, so they are rarely undone; where they keep being
    undone (a word that merges into a few long tokens), the word is merged whole once the
    parts merged again pass its length, so the cost stays within a few passes over it.

    Each cut is planned ``chunk`` parts after the one before, so a word that repeats itself
    repeats its chunks too: a chunk's merges depend on its ids alone, and one seen before in
    the word is not merged again. ``made``, if given, is what each pair of neighbours in
    ``ids`` makes, and ``ties`` whether ranks tie between merges (both as in
    :func:`bpe_rank_buckets`).

    Example:
        >>> from labkit.algorithms.bpe import bpe_rank_chunks, bpe_rank_buckets
        >>> table = {(0 << 24) | 1: (0 << 24) | 2, (2 << 24) | 2: (1 << 24) | 3}  # 0+1 -> 2, 2+2 -> 3
        >>> word = [0, 1] * 9
        >>> bpe_rank_chunks(word, dict(table), lambda a, b: -1, chunk=4) == bpe_rank_buckets(word, dict(table), lambda a, b: -1)
        True
    """
    n = len(ids)
    chunk = min(chunk, max(n // 2, CHUNK_MIN_PARTS))
    whole = partial(bpe_rank_buckets, ids, known, pair, made, ties=ties)
    if n < 2 * chunk:
        return whole()
    cuts = [0]
    target = chunk
    while target < n - chunk // 2:
        cut = likely_token_end(ids, target, known, pair, made, ties=ties)
        if cut is None:  # a merge whose bytes are not a token, or an odd rank order, near here
            return whole()
        if cut > cuts[-1]:
            cuts.append(cut)
            target = cut + chunk
        else:  # no token starts between the last cut and here: plan the next one further on
            target += chunk
    cuts.append(n)
    # a chunk's ids -> what merge_chunk made of them (bounded: a word that does not repeat
    # itself would otherwise keep a copy of all its ids)
    seen: dict[tuple, tuple | None] = BoundedDict(CHUNK_MEMO_ENTRIES)

    def merged_chunk(start: int, end: int) -> tuple | None:
        key = tuple(ids[start:end])
        if key not in seen:
            seen[key] = merge_chunk(ids, start, end, known, pair, made, ties=ties)
        return seen[key]

    done: list[tuple] = []  # (start, ids out, parts at the start, parts at the end) per chunk
    # parts merged again after undone cuts: past the word's length, cuts keep failing (a word
    # that merges into a few long tokens) and merging it whole is cheaper than going on
    redone = 0
    for start, end in zip(cuts, cuts[1:]):
        merged = merged_chunk(start, end)
        while merged is not None and done and not cut_holds(done[-1][3], merged[1], known, pair):
            start = done.pop()[0]  # the cut may be joined: merge the two chunks again as one
            redone += end - start
            if redone > n:
                return whole()
            merged = merged_chunk(start, end)
        if merged is None:
            return whole()
        done.append((start, *merged))
    return list(chain.from_iterable(chunk_out[1] for chunk_out in done))  # in C: the chunks' ids joined


def likely_token_end(ids: list[int], target: int, known, pair, made: list[int] | None = None, *,
                     ties: bool = False) -> int | None:
    """A position near ``target`` where BPE on a small window around it ends a token (None
    if a merge there makes a pair of a lower rank than its own, or bytes that are no token).
    ``made``, if given: what each pair of neighbours in ``ids`` makes; ``ties``: as in
    :func:`bpe_rank_buckets`.

    Example (0+1 -> 2: every token is two parts long, so tokens end at even positions):
        >>> from labkit.algorithms.bpe import likely_token_end
        >>> likely_token_end([0, 1] * 40, 41, {1: 2}, lambda a, b: -1)
        40
    """
    lo, hi = max(0, target - _PROBE_PARTS), min(len(ids), target + _PROBE_PARTS)
    sym = _bucket_loop(ties)(ids[lo:hi], known, pair, [], None if made is None else made[lo:hi - 1])
    if sym is None:
        return None
    # where the window's tokens start (in C: the positions whose part was not merged away)
    starts = compress(range(lo, hi), map((0).__le__, sym))
    return min(starts, key=lambda k: abs(k - target))  # the first of two equally near


def merge_chunk(ids: list[int], start: int, end: int, known, pair, made: list[int] | None = None, *,
                ties: bool = False) -> tuple | None:
    """ids[start:end] merged: (ids out, parts at its start, parts at its end), each part as
    ``[id, rank it was made at, rank it is merged away at]`` (-1: there from the start; a
    huge number: never merged away); None if it cannot be cut. ``made``, if given: what
    each pair of neighbours in ``ids`` makes; ``ties``: as in :func:`bpe_rank_buckets`.

    Example (0+1 -> 2 at rank 0, 2+2 -> 3 at rank 1):
        >>> from labkit.algorithms.bpe import merge_chunk
        >>> out, first, last = merge_chunk([0, 1, 0, 1], 0, 4, {1: 2, (2 << 24) | 2: (1 << 24) | 3}, lambda a, b: -1)
        >>> out, [part[:2] for part in first]
        ([3], [[0, -1], [2, 0], [3, 1]])
    """
    edges: list = []
    sym = _bucket_loop(ties)(ids[start:end], known, pair, edges, None if made is None else made[start:end - 1])
    if sym is None:
        return None
    out = _left(sym)
    first, last = [[ids[start], -1, _NEVER]], [[ids[end - 1], -1, _NEVER]]
    for is_first, is_last, rank, made in edges:
        for side, changed in ((first, is_first), (last, is_last)):
            if changed:
                side[-1][2] = rank
                side.append([made, rank, _NEVER])
    return out, first, last


def cut_holds(left_parts: list, right_parts: list, known, pair) -> bool:
    """True if no part at the end of the left chunk is ever joined with a part at the start
    of the right chunk (each as ``[id, made at, gone at]``, from :func:`merge_chunk`).

    Example (two 'ab' tokens side by side, and 'ab'+'ab' ranked: the cut between them fails):
        >>> from labkit.algorithms.bpe import merge_chunk, cut_holds
        >>> table, no_merge = {1: 2, (2 << 24) | 2: (1 << 24) | 3}, lambda a, b: -1
        >>> left, right = merge_chunk([0, 1], 0, 2, table, no_merge), merge_chunk([0, 1], 0, 2, table, no_merge)
        >>> cut_holds(left[2], right[1], table, no_merge)
        False
    """
    for x, x_made, x_gone in left_parts:
        for y, y_made, y_gone in right_parts:
            gone = min(x_gone, y_gone)
            if max(x_made, y_made) > gone:
                continue  # never side by side
            value = known.get((x << 24) | y)
            if value is None:
                value = pair(x, y)
            # a pair ranked before one of them is gone would be merged (ties too: leftmost first)
            if value >= 0 and value >> 24 <= gone:
                return False
    return True


def _walk(nxt: list[int], start: int, stop: int | None = None):
    k = start
    while k >= 0 and k != stop:
        yield k
        k = nxt[k]


def byte_parts(data: bytes) -> list[bytes]:
    """The starting parts of a word: one single-byte part per byte.

    Example:
        >>> from labkit.algorithms.bpe import byte_parts
        >>> byte_parts(b"hi")
        [b'h', b'i']
    """
    return [data[i : i + 1] for i in range(len(data))]


def merges_to_pair_ranks(merges: Iterable[tuple[bytes, bytes]]) -> dict[tuple[bytes, bytes], int]:
    """``{(left, right): rank}`` from merges in rank order (the first occurrence wins, as in HF).

    Example:
        >>> from labkit.algorithms.bpe import merges_to_pair_ranks
        >>> merges_to_pair_ranks([(b"a", b"b")])
        {(b'a', b'b'): 0}
    """
    ranks: dict[tuple[bytes, bytes], int] = {}
    for index, pair in enumerate(merges):
        ranks.setdefault(pair, index)
    return ranks


def encode_word(data: bytes, rank: Ranker, token_id: Mapping[bytes, int], *, naive: bool = False,
                trace: MergeTrace | None = None) -> list[int]:
    """BPE one pre-token's bytes and look each final part up: the ids of the word.

    Example:
        >>> from labkit.algorithms.bpe import concat_ranker, encode_word
        >>> r = {b"h": 0, b"i": 1, b"hi": 2}
        >>> encode_word(b"hi", concat_ranker(r), r)
        [2]

    Introduced in notebook ``02_bpe_byte_level``.
    """
    parts = byte_parts(data)
    parts = (bpe_naive if naive else bpe_heap)(parts, rank, trace=trace)
    out = []
    for p in parts:
        i = token_id.get(p)
        if i is None:
            raise LabkitError(f"bpe: part {p!r} of word {data!r} is not in the vocabulary")
        out.append(i)
    return out
