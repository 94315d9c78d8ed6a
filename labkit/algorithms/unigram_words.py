"""Unigram one '▁'-word at a time: a cache of each word's lattice that gives exactly the
ids of the whole-text Viterbi pass, in time linear in the text.

When no piece holds '▁' after its first character, every segmentation breaks before each
'▁', so a text is a sequence of words. What one word contributes still depends on the text
before it, but only through one number: the running total at the word's start, whose
rounding can decide near-ties inside the word (and, in sentencepiece, trigger a rebase).
So each word's entry keeps:

* its lattice edges from offset 0 (found once with a trie walk) and its best path;
* the running totals for which that path is certainly the one the full pass would pick:
  every decision inside the word won by a margin wider than the rounding the total could
  add, and (sentencepiece) no offset of the word reaches the rebase limit.

For such a total the cached ids are used and the word's scores are added along its path,
rounded exactly as the full pass rounds them, to give the next word's total. For any other
total the word's Viterbi pass is rerun over its cached edges from that total (no trie walk),
rebase included. Both give what :meth:`UnigramModel.viterbi` gives on the whole text.
Introduced in notebook ``05_unigram_trie_viterbi``.

Example: ``WordCache(model).ids(split_words("▁the▁cat▁the"))`` == ``[i for i, _, _ in model.encode("▁the▁cat▁the")]``
"""
from __future__ import annotations

import math
from array import array

from labkit.algorithms.unigram import UnigramModel, backtrack, split_words

_FLOAT32_BITS = 24  # significant bits of a float32
_FLOAT64_BITS = 53
_DEFAULT_LIMIT = 200_000  # words kept; the cache is emptied when it grows past this


class WordCache:
    """Segments '▁'-words through ``model`` with a per-word cache, exactly as the whole-text
    Viterbi pass would (see the module docstring for why that is exact).

    Example: ``cache = WordCache(model); cache.ids(["▁the", "▁cat"])``
    """

    def __init__(self, model: UnigramModel, max_words: int = _DEFAULT_LIMIT):
        if not model.word_boundary:
            raise ValueError("WordCache: the model has pieces that hold '▁' inside; words cannot be segmented alone")
        self.model = model
        self.max_words = int(max_words)
        self._entries: dict[str, tuple] = {}
        bits = _FLOAT32_BITS if model.float32_sums else _FLOAT64_BITS
        self._ulp_shift = bits - 1  # ulp(x) = 2**(exponent of x - shift)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every cached word. Example: ``cache.clear()``"""
        self._entries.clear()

    # -- the public calls -----------------------------------------------------
    def ids(self, words: list[str]) -> list[int]:
        """The ids of the words' concatenation, unknown runs merged (as :meth:`UnigramModel.encode`).

        Example: ``cache.ids(split_words("▁the▁cat"))``
        """
        model = self.model
        if len(self._entries) > self.max_words:
            self._entries.clear()
        entries = self._entries
        get = entries.get
        out: list[int] = []
        extend = out.extend
        total = 0.0
        f32 = array("f", [0.0])
        if model.float32_sums:
            for word in words:
                entry = get(word)
                if entry is None:
                    entry = entries[word] = self._entry(word)
                if -entry[2] < total < entry[2]:
                    extend(entry[0])
                    for score in entry[1]:
                        f32[0] = total + score
                        total = f32[0]
                else:
                    pieces, total = self._rerun(entry, total)
                    extend([piece_id for piece_id, _, _ in pieces])
        else:
            for word in words:
                entry = get(word)
                if entry is None:
                    entry = entries[word] = self._entry(word)
                if -entry[2] < total < entry[2]:
                    extend(entry[0])
                    for score in entry[1]:
                        total += score
                else:
                    pieces, total = self._rerun(entry, total)
                    extend([piece_id for piece_id, _, _ in pieces])
        unk = model.unk_id
        if unk in out:
            if model.byte_fallback and model.byte_ids:
                # unknown characters are spelled as bytes: that needs their text
                return [piece_id for piece_id, _, _ in self.encode("".join(words))]
            # a run of unknowns becomes one unknown (what UnigramModel.finish does)
            out = [piece_id for k, piece_id in enumerate(out) if piece_id != unk or k == 0 or out[k - 1] != unk]
        return out

    def word_pieces(self, words: list[str]) -> list[tuple[tuple[int, int, int], ...]]:
        """Per word, its pieces as (id, start, end) with offsets inside the word (unknowns not merged).

        Example: ``cache.word_pieces(["▁the", "▁cat"])[1]`` -> ``((id, 0, 4),)``
        """
        model = self.model
        if len(self._entries) > self.max_words:
            self._entries.clear()
        entries = self._entries
        out = []
        total = 0.0
        f32 = array("f", [0.0])
        float32 = model.float32_sums
        for word in words:
            entry = entries.get(word)
            if entry is None:
                entry = entries[word] = self._entry(word)
            if -entry[2] < total < entry[2]:
                out.append(entry[4])
                for score in entry[1]:
                    if float32:
                        f32[0] = total + score
                        total = f32[0]
                    else:
                        total += score
            else:
                pieces, total = self._rerun(entry, total)
                out.append(pieces)
        return out

    def segment(self, text: str) -> list[tuple[int, int, int]]:
        """:meth:`UnigramModel.viterbi` of normalised ``text`` through the cache.

        Example: ``cache.segment("▁the▁cat") == model.viterbi("▁the▁cat")`` -> ``True``
        """
        words = split_words(text)
        out: list[tuple[int, int, int]] = []
        start = 0
        for word, pieces in zip(words, self.word_pieces(words)):
            out.extend([(piece_id, start + s, start + e) for piece_id, s, e in pieces])
            start += len(word)
        return out

    def encode(self, text: str) -> list[tuple[int, int, int]]:
        """:meth:`UnigramModel.encode` of normalised ``text`` through the cache.

        Example: ``cache.encode("▁a你好") == model.encode("▁a你好")`` -> ``True``
        """
        return self.model.finish(self.segment(text), text)

    # -- one word ---------------------------------------------------------------
    def _entry(self, word: str) -> tuple:
        """(ids, path scores, safe |total| bound, edges by offset, pieces, length) of one word."""
        model = self.model
        n = len(word)
        edges = [tuple(model.candidates(word, pos)) for pos in range(n)]
        # the pass from 0 in doubles: the margins of every decision and the largest partial sum
        best = [0.0] * (n + 1)
        start_at = [-1] * (n + 1)
        best_id = [model.unk_id] * (n + 1)
        margin = math.inf
        magnitude = 0.0
        for pos in range(n):
            here = best[pos]
            for end, piece_id, score, _ in edges[pos]:
                candidate = score + here
                magnitude = max(magnitude, abs(candidate))
                if start_at[end] >= 0:
                    margin = min(margin, abs(candidate - best[end]))
                    if candidate <= best[end]:
                        continue
                best[end], start_at[end], best_id[end] = candidate, pos, piece_id
        pieces = backtrack(start_at, best_id, n)
        scores = tuple(model.scores[i] if i != model.unk_id else model.unk_score for i, _, _ in pieces)
        # a value after k roundings is within k/2 ulp of exact; a decision compares two of them
        bound = -1.0
        if margin > 0:
            exponent = math.frexp(margin / (n + 2))[1] - 2  # 2**exponent < margin / (n + 2)
            bound = math.ldexp(1.0, exponent + self._ulp_shift) - magnitude
            if model.rebase_limit is not None:
                bound = min(bound, model.rebase_limit - magnitude - 1.0)
        return tuple(i for i, _, _ in pieces), scores, bound, tuple(edges), tuple(pieces), n

    def _rerun(self, entry: tuple, total: float) -> tuple[tuple, float]:
        """The word's Viterbi pass over its cached edges from running ``total``, rounding and
        rebasing exactly as :meth:`UnigramModel._forward` does: (pieces, total after the word)."""
        model = self.model
        edges, n = entry[3], entry[5]
        float32 = model.float32_sums
        best = array("f", bytes(4 * (n + 1))) if float32 else [0.0] * (n + 1)
        best[0] = total
        start_at = [-1] * (n + 1)
        best_id = [model.unk_id] * (n + 1)
        limit = model.rebase_limit
        reach = 0
        f32 = array("f", [0.0])
        for pos in range(n):
            here = best[pos]
            if limit is not None and (here < -limit or here > limit):
                for k in range(pos, reach + 1):
                    if k == pos or start_at[k] >= 0:
                        best[k] = best[k] - here
                here = 0.0
            for end, piece_id, score, _ in edges[pos]:
                candidate = score + here
                if float32:
                    f32[0] = candidate
                    candidate = f32[0]
                if start_at[end] < 0 or candidate > best[end]:
                    best[end], start_at[end], best_id[end] = candidate, pos, piece_id
                if end > reach:
                    reach = end
        return tuple(backtrack(start_at, best_id, n)), best[n]

