"""BPE-dropout (Provilkov et al. 2020) on labkit's byte-level BPE engine, step for step as
``tokenizers`` runs it.

Plain BPE merges the best-ranked adjacent pair until none is left. With dropout ``p``,
``tokenizers`` (``Word::merge_all``) keeps its queue of candidate merges ordered by rank,
then position, and for every entry it pops draws a random number first: with probability
``p`` the entry is set aside, otherwise the entries set aside go back into the queue and
the popped one is applied (if still valid). So a dropped merge is only postponed past the
next one that happens; entries still set aside when the queue runs dry are lost. Stale
entries draw too, which changes nothing but the number of draws. With dropout
``tokenizers`` also skips its cache and the ``ignore_merges`` whole-word lookup.

The merges come from the engine's public tables (``pair_ranks``, ``bytes_id``) and words
from its pre-tokenizer (``pre.split``); :meth:`BPEDropout.distribution` enumerates every
outcome of the random process with its exact probability, for short words.
Introduced in notebook ``13_where_vocabularies_come_from``.

Example:
    >>> from labkit.training.bpe_dropout import BPEDropout
    >>> BPEDropout.load("gpt-2").encode("Hello world", 0.1, seed=0)
    [15496, 995]
"""
from __future__ import annotations

import heapq
import math
import random
from labkit.core import LabkitError

MAX_WORD_BYTES = 64  # exact enumeration grows fast: only short words
MAX_TEXT_CHARS = 1_000_000


class BPEDropout:
    """Dropout encoding over a labkit byte-level BPE engine's merges.

    Example:
        >>> from labkit.training.bpe_dropout import BPEDropout
        >>> import random
        >>> import labkit
        >>> BPEDropout(labkit.load("gpt-2", engine="labkit")).word_ids(" lower", 0.5, random.Random(0))
        [2376, 15448]
    """

    def __init__(self, engine):
        pair_ranks = getattr(engine, "pair_ranks", None)
        bytes_id = getattr(engine, "bytes_id", None)
        if pair_ranks is None or bytes_id is None or not hasattr(engine, "pre"):
            raise LabkitError(f"BPEDropout: {getattr(engine, 'name', engine)!r} is no labkit byte-level BPE engine "
                              "with merges (tiktoken rank files and other models are not served)")
        self.engine = engine
        self.bytes_id = bytes_id
        # (left id, right id) -> (rank, merged id), as tokenizers' merge map
        self.merges: dict[tuple[int, int], tuple[int, int]] = {}
        for (left, right), rank in pair_ranks.items():
            ids = (bytes_id.get(left), bytes_id.get(right), bytes_id.get(left + right))
            if None not in ids:
                self.merges.setdefault((ids[0], ids[1]), (rank, ids[2]))

    @classmethod
    def load(cls, source) -> "BPEDropout":
        """Dropout over the labkit engine of a bundled name or a file.

        Example:
            >>> from labkit.training.bpe_dropout import BPEDropout
            >>> dropout = BPEDropout.load("gpt2")
            >>> dropout.encode("Hello world", 0.0, seed=0)
            [15496, 995]
        """
        import labkit

        return cls(labkit.load(source, engine="labkit"))

    def symbols(self, word: str) -> list[int]:
        """The ids BPE starts from: one per byte of the word (a byte with no token is
        dropped, as tokenizers does with no unknown token).

        Example:
            >>> from labkit.training.bpe_dropout import BPEDropout
            >>> dropout = BPEDropout.load("gpt2")
            >>> dropout.symbols(" a")
            [220, 64]
        """
        table = self.bytes_id
        return [table[b] for b in (bytes([value]) for value in word.encode("utf-8")) if b in table]

    def word_ids(self, word: str, p: float, rng: random.Random) -> list[int]:
        """One pre-token's ids with merges dropped at rate ``p`` (``p = 0``: plain BPE).

        Example:
            >>> import random
            >>> from labkit.training.bpe_dropout import BPEDropout
            >>> dropout = BPEDropout.load("gpt2")
            >>> dropout.word_ids(" lower", 0.0, random.Random(0))
            [2793]
        """
        _check_p(p)
        symbols = self.symbols(word)
        if not symbols:
            return []
        return _merge_all(symbols, self.merges, lambda: rng.random() < p)

    def encode(self, text: str, p: float, *, seed: int | None = None, rng: random.Random | None = None) -> list[int]:
        """The ids of ``text`` (no special tokens, no BOS) with BPE-dropout on every pre-token.

        Example:
            >>> from labkit.training.bpe_dropout import BPEDropout
            >>> dropout = BPEDropout.load("gpt2")
            >>> dropout.encode("Hello world", 0.1, seed=1)
            [15496, 266, 1764]
        """
        if not isinstance(text, str):
            raise LabkitError(f"BPEDropout.encode: text must be str, got {type(text).__name__}")
        if len(text) > MAX_TEXT_CHARS:
            raise LabkitError(f"BPEDropout.encode: text of {len(text):,} characters is over {MAX_TEXT_CHARS:,}")
        _check_p(p)
        rng = rng or random.Random(seed)
        out: list[int] = []
        for word in self.engine.pre.split(text):
            out.extend(self.word_ids(word, p, rng))
        return out

    def distribution(self, word: str, p: float) -> dict[tuple[int, ...], float]:
        """Every possible result for one pre-token with its exact probability, found by
        following both outcomes of every draw (memoised on the process state).

        Example:
            >>> from labkit.training.bpe_dropout import BPEDropout
            >>> dropout = BPEDropout.load("gpt2")
            >>> sorted(dropout.distribution(" low", 0.5).items())[:2]
            [((220, 75, 78, 86), 0.125), ((220, 75, 322), 0.046875)]
        """
        _check_p(p)
        symbols = self.symbols(word)
        if len(symbols) > MAX_WORD_BYTES:
            raise LabkitError(f"BPEDropout.distribution: {len(symbols)} bytes is over {MAX_WORD_BYTES}; use a shorter word")
        if not symbols:
            return {(): 1.0}
        merges = self.merges
        memo: dict = {}

        def outcomes(state) -> dict[tuple[int, ...], float]:
            found = memo.get(state)
            if found is not None:
                return found
            ids, queue, skipped = state
            if not queue:
                result = {tuple(i for i in ids if i is not None): 1.0}
            else:
                top, rest = queue[0], queue[1:]
                dropped = outcomes((ids, rest, tuple(sorted(skipped + (top,)))))
                kept_state = _apply(list(ids), tuple(sorted(rest + skipped)), top, merges)
                kept = outcomes(kept_state)
                result = {}
                for key, value in dropped.items():
                    result[key] = result.get(key, 0.0) + p * value
                for key, value in kept.items():
                    result[key] = result.get(key, 0.0) + (1 - p) * value
            memo[state] = result
            return result

        start = tuple(symbols)
        queue = tuple(sorted(_initial_queue(list(start), merges)))
        return outcomes((start, queue, ()))


def _check_p(p: float) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise LabkitError(f"BPEDropout: p must be a number in [0, 1], got {p!r}")


def _initial_queue(ids: list, merges) -> list[tuple[int, int, int]]:
    out = []
    for pos in range(len(ids) - 1):
        found = merges.get((ids[pos], ids[pos + 1]))
        if found is not None:
            out.append((found[0], pos, found[1]))
    return out


def _neighbours(ids: list, pos: int) -> tuple[int, int]:
    prev = pos - 1
    while prev >= 0 and ids[prev] is None:
        prev -= 1
    nxt = pos + 1
    while nxt < len(ids) and ids[nxt] is None:
        nxt += 1
    return prev, nxt


def _merge_at(ids: list, top: tuple[int, int, int], merges) -> list[tuple[int, int, int]] | None:
    """Apply queue entry ``top`` if it is still valid (None if stale): the right symbol
    is removed, and the entries for the pairs the new symbol forms are returned."""
    _, pos, new_id = top
    if ids[pos] is None:
        return None
    _, nxt = _neighbours(ids, pos)
    if nxt >= len(ids):
        return None
    found = merges.get((ids[pos], ids[nxt]))
    if found is None or found[1] != new_id:
        return None
    ids[pos] = new_id
    ids[nxt] = None
    prev, after = _neighbours(ids, pos)
    entries = []
    if prev >= 0:
        pair = merges.get((ids[prev], new_id))
        if pair is not None:
            entries.append((pair[0], prev, pair[1]))
    if after < len(ids):
        pair = merges.get((new_id, ids[after]))
        if pair is not None:
            entries.append((pair[0], pos, pair[1]))
    return entries


def _apply(ids: list, queue: tuple, top: tuple[int, int, int], merges):
    """The state after a kept draw: skipped entries are back in ``queue``; ``top`` merges
    if it is still valid, and the pairs it forms with its neighbours join the queue."""
    queue = list(queue) + (_merge_at(ids, top, merges) or [])
    return tuple(ids), tuple(sorted(queue)), ()


def _merge_all(symbols: list[int], merges, drop) -> list[int]:
    """tokenizers' ``merge_all``: pop by (rank, position); ``drop()`` decides each pop."""
    ids: list = list(symbols)
    queue = _initial_queue(ids, merges)
    heapq.heapify(queue)
    skipped: list[tuple[int, int, int]] = []
    while queue:
        top = heapq.heappop(queue)
        if drop():
            skipped.append(top)
            continue
        for entry in skipped:
            heapq.heappush(queue, entry)
        skipped.clear()
        for entry in _merge_at(ids, top, merges) or ():
            heapq.heappush(queue, entry)
    return [i for i in ids if i is not None]


def expected_tokens(distribution: dict[tuple[int, ...], float]) -> float:
    """The mean number of tokens under a distribution of outcomes.

    Example:
        >>> from labkit.training.bpe_dropout import expected_tokens
        >>> expected_tokens({(1,): 0.5, (2, 3): 0.5})
        1.5
    """
    return math.fsum(len(key) * p for key, p in distribution.items())
