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

Example (the second "▁the" comes from the cache; the ids are the whole-text pass's):
    >>> import labkit
    >>> from labkit.algorithms.unigram import split_words
    >>> from labkit.algorithms.unigram_words import WordCache
    >>> model = labkit.load("botchan-unigram", engine="labkit").model
    >>> ids = WordCache(model).ids(split_words("▁the▁cat▁the"))
    >>> ids, ids == [i for i, _, _ in model.encode("▁the▁cat▁the")]
    ([7, 78, 77, 7], True)
"""
from __future__ import annotations

import math
from array import array

from labkit.algorithms.bounded import WORD_CACHE_ENTRIES, BoundedDict
from labkit.algorithms.unigram import UnigramModel, backtrack, split_words

_FLOAT32_BITS = 24  # significant bits of a float32
_FLOAT64_BITS = 53
_ROBUST_TOTAL = 1e7  # double sums: a word safe below this total is kept whole
# a longer word (Chinese, Japanese, code without spaces) is cached in pieces about this long,
# so that the running total can cross a rounding or rebase boundary inside it at little cost
CHUNK_CHARS = 64


class WordCache:
    """Segments '▁'-words through ``model`` with a per-word cache, exactly as the whole-text
    Viterbi pass would (see the module docstring for why that is exact).

    Example (two distinct words cached):
        >>> import labkit
        >>> cache = WordCache(labkit.load("botchan-unigram", engine="labkit").model)
        >>> cache.ids(["▁the", "▁cat", "▁the"]), len(cache)
        ([7, 78, 77, 7], 2)
    """

    def __init__(self, model: UnigramModel, max_words: int = WORD_CACHE_ENTRIES):
        if not model.word_boundary:
            raise ValueError("WordCache: the model has pieces that hold '▁' inside; words cannot be segmented alone")
        self.model = model
        self._entries: dict[str, tuple] = BoundedDict(max_words)
        # the same entries keyed by the word without its leading '▁' (no string built per word)
        self._after_space: dict[str, tuple] = BoundedDict(max_words)
        self._bits = _FLOAT32_BITS if model.float32_sums else _FLOAT64_BITS
        # a word safe for every total down to this needs no cutting (sentencepiece rebases past it)
        self._robust = model.rebase_limit - 1.0 if model.rebase_limit is not None else _ROBUST_TOTAL

    def __len__(self) -> int:
        return len(self._entries) + len(self._after_space)

    def clear(self) -> None:
        """Forget every cached word.

        Example:
            >>> import labkit
            >>> cache = WordCache(labkit.load("botchan-unigram", engine="labkit").model)
            >>> _ = cache.ids(["▁the"])
            >>> cache.clear()
            >>> len(cache)
            0
        """
        self._entries.clear()
        self._after_space.clear()

    # -- the public calls -----------------------------------------------------
    def ids(self, words: list[str], after_space: bool = False) -> list[int]:
        """The ids of the words' concatenation, unknown runs merged (as :meth:`UnigramModel.encode`).
        With ``after_space``, each word stands for '▁' + word (``text.split(" ")`` gives them).

        Example:
            >>> import labkit
            >>> from labkit.algorithms.unigram import split_words
            >>> cache = labkit.load("botchan-unigram", engine="labkit").word_cache
            >>> cache.ids(split_words("▁the▁cat")) == cache.ids(["the", "cat"], after_space=True)
            True
        """
        model = self.model
        entries = self._after_space if after_space else self._entries
        get = entries.get
        out: list[int] = []
        extend = out.extend
        total = 0.0
        f32 = array("f", [0.0])
        float32 = model.float32_sums
        unk = model.unk_id
        for word in words:
            entry = get(word)
            if entry is None:
                entry = entries[word] = self._entry("\u2581" + word if after_space else word)
            for span in entry:
                bound = span[2]
                if -bound < total < bound:
                    # the cached path (the hot loop, so inlined; _unsafe_ids takes the same step via
                    # _total_after); a run of unknowns crossing into it stays one unknown
                    extend(span[6] if not span[7] or not out or out[-1] != unk else span[6][1:])
                    if float32:
                        for score in span[1]:
                            f32[0] = total + score
                            total = f32[0]
                    else:
                        for score in span[1]:
                            total += score
                else:
                    total = self._unsafe_ids(span, total, out)
        if model.byte_fallback and model.byte_ids and unk in out:
            # unknown characters are spelled as bytes: that needs their text
            return [piece_id for piece_id, _, _ in self.encode(("\u2581" if after_space else "").join(["", *words]))]
        return out

    def _unsafe_ids(self, chunk: tuple, total: float, out: list[int]) -> float:
        """:meth:`ids` for a chunk its cached path does not serve at ``total``: its spans one
        by one (cached or rerun), or the chunk rerun when it is a single span. Returns the
        total after it."""
        unk = self.model.unk_id
        for span in self._parts(chunk):
            if -span[2] < total < span[2]:
                out.extend(span[6] if not span[7] or not out or out[-1] != unk else span[6][1:])
                total = self._total_after(total, span[1])
            else:
                pieces, total = self._rerun(span, total)
                ids = _merge_unknowns([piece_id for piece_id, _, _ in pieces], unk)
                out.extend(ids if ids[0] != unk or not out or out[-1] != unk else ids[1:])
        return total

    def _total_after(self, total: float, scores: tuple[float, ...]) -> float:
        """The running total after adding a cached path's ``scores``, rounded as the full pass rounds."""
        if not self.model.float32_sums:
            for score in scores:
                total += score
            return total
        f32 = array("f", [0.0])
        for score in scores:
            f32[0] = total + score
            total = f32[0]
        return total

    def word_pieces(self, words: list[str], after_space: bool = False) -> list[list[tuple[int, int, int]]]:
        """Per word, its pieces as (id, start, end) with offsets inside the word (unknowns not
        merged). With ``after_space``, each word stands for '▁' + word, as in :meth:`ids`.

        Example ("▁cat" is "▁c" + "at" in botchan's vocabulary):
            >>> import labkit
            >>> WordCache(labkit.load("botchan-unigram", engine="labkit").model).word_pieces(["▁the", "▁cat"])
            [[(7, 0, 4)], [(78, 0, 2), (77, 2, 4)]]
        """
        entries = self._after_space if after_space else self._entries
        out = []
        total = 0.0
        for word in words:
            entry = entries.get(word)
            if entry is None:
                entry = entries[word] = self._entry("\u2581" + word if after_space else word)
            pieces: list[tuple[int, int, int]] = []
            for chunk in entry:
                for span in ((chunk,) if -chunk[2] < total < chunk[2] else self._parts(chunk)):
                    if -span[2] < total < span[2]:
                        pieces.extend(span[5])
                        total = self._total_after(total, span[1])
                    else:
                        rerun, total = self._rerun(span, total)
                        shift = span[8]
                        pieces.extend([(piece_id, s + shift, e + shift) for piece_id, s, e in rerun])
            out.append(pieces)
        return out

    def segment(self, text: str) -> list[tuple[int, int, int]]:
        """:meth:`UnigramModel.viterbi` of normalised ``text`` through the cache.

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> WordCache(model).segment("▁the▁cat") == model.viterbi("▁the▁cat")
            True
        """
        # words after a '▁' share the entries ids() keeps for them
        after_space = text.startswith("\u2581")
        words = text[1:].split("\u2581") if after_space else split_words(text)
        out: list[tuple[int, int, int]] = []
        start = 0
        for word, pieces in zip(words, self.word_pieces(words, after_space)):
            out.extend([(piece_id, start + s, start + e) for piece_id, s, e in pieces])
            start += len(word) + after_space
        return out

    def encode(self, text: str) -> list[tuple[int, int, int]]:
        """:meth:`UnigramModel.encode` of normalised ``text`` through the cache.

        Example (the two unknown characters merge into one ``<unk>``, id 0):
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> WordCache(model).encode("▁a你好"), model.encode("▁a你好")
            ([(11, 0, 2), (0, 2, 4)], [(11, 0, 2), (0, 2, 4)])
        """
        return self.model.finish(self.segment(text), text)

    # -- one word ---------------------------------------------------------------
    def _entry(self, word: str) -> tuple[tuple, ...]:
        """A short word as one span (:meth:`_span`), used wherever the running total allows;
        at other totals its spans between cut points (where no lattice edge crosses; an
        unknown character often gives two), robust neighbours joined, so that only the
        fragile span is rerun. A long word is cut into chunks of about :data:`CHUNK_CHARS`
        chars at cut points, each treated like a short word."""
        model = self.model
        n = len(word)
        edges = [tuple(model.candidates(word, pos)) for pos in range(n)]
        if n <= CHUNK_CHARS:
            whole = self._span(edges, 0, n)
            if whole[2] >= self._robust - whole[9]:
                return (whole,)
        cuts = [0]
        reach = 0
        for pos in range(n):
            if reach <= pos and pos > cuts[-1]:
                cuts.append(pos)
            reach = max(reach, max(end for end, _, _, _ in edges[pos]))
        cuts.append(n)
        if n <= CHUNK_CHARS:
            # the whole word where the total allows, its (joined) spans elsewhere
            return (whole[:10] + ([edges, cuts] if len(cuts) > 2 else [],),)
        chunks = []
        first = 0
        for k in range(1, len(cuts)):
            if k == len(cuts) - 1 or cuts[k] - cuts[first] >= CHUNK_CHARS:
                # the chunk's spans are found the first time the chunk is unsafe
                parts = [edges, cuts[first : k + 1]] if k - first > 1 else []
                chunks.append(self._span(edges, cuts[first], cuts[k], parts))
                first = k
        return tuple(chunks)

    def _parts(self, chunk: tuple) -> tuple[tuple, ...]:
        """The spans ``chunk`` is made of (found once, on first need), or ``(chunk,)``."""
        parts = chunk[10]
        if not parts:
            return (chunk,)
        if len(parts) == 2 and isinstance(parts[1], list):
            edges, cuts = parts
            parts[:] = self._joined_robust(edges, cuts, [self._span(edges, start, stop) for start, stop in zip(cuts, cuts[1:])])
        return tuple(parts)

    def _joined_robust(self, edges: list, cuts: list[int], spans: list[tuple]) -> tuple[tuple, ...]:
        """``spans`` with each run of robust ones (safe at every total short of the limit)
        joined into one span where the joined span is robust too (a run that is not is
        halved until it is): fewer steps per word."""
        def is_robust(span: tuple) -> bool:
            return span[2] >= self._robust - span[9]

        def join(k: int, j: int) -> list[tuple]:
            # spans[k:j], all robust: joined if that stays robust, else each half joined alone
            if j - k == 1:
                return [spans[k]]
            joined = self._span(edges, cuts[k], cuts[j])
            if is_robust(joined):
                return [joined]
            middle = (k + j) // 2
            return join(k, middle) + join(middle, j)

        out: list[tuple] = []
        k = 0
        while k < len(spans):
            j = k + 1
            if is_robust(spans[k]):
                while j < len(spans) and is_robust(spans[j]):
                    j += 1
                out.extend(join(k, j))
            else:
                out.append(spans[k])
            k = j
        return tuple(out)

    def _span(self, word_edges: list, offset: int, stop: int, parts: list | tuple = ()) -> tuple:
        """(ids, path scores, safe |total| bound, edges, length, pieces at word offsets, ids
        with unknown runs merged, starts with an unknown, offset, largest partial sum, the
        spans it is made of: empty, or [word edges, cuts] until :meth:`_parts` fills it)
        of ``word[offset:stop]``."""
        model = self.model
        n = stop - offset
        edges = tuple(tuple((end - offset, piece_id, score, unknown) for end, piece_id, score, unknown in word_edges[pos])
                      for pos in range(offset, stop))
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
        # a value after k <= n roundings is within k/2 ulp of exact, so a decision between two
        # of them stands while (n + 1) ulp < margin; below 2**e a float's ulp is at most
        # 2**(e - bits), so every total below 2**(frexp exponent + bits - 2) - magnitude is safe
        bound = -1.0
        if margin > 0:
            exponent = math.frexp(margin / (n + 1))[1]
            bound = math.ldexp(1.0, exponent + self._bits - 2) - magnitude
            if model.rebase_limit is not None:
                bound = min(bound, model.rebase_limit - magnitude - 1.0)
        ids = [i for i, _, _ in pieces]
        merged = tuple(_merge_unknowns(ids, model.unk_id))
        at_word = tuple((i, s + offset, e + offset) for i, s, e in pieces)
        return tuple(ids), scores, bound, edges, n, at_word, merged, merged[0] == model.unk_id, offset, magnitude, parts

    def _rerun(self, entry: tuple, total: float) -> tuple[tuple, float]:
        """A span's Viterbi pass over its cached edges from running ``total``, rounding and
        rebasing exactly as :meth:`UnigramModel._forward` does: (pieces at span offsets,
        total after the span)."""
        model = self.model
        edges, n = entry[3], entry[4]
        float32 = model.float32_sums
        best = [0.0] * (n + 1)  # every value stored is already rounded as the full pass rounds it
        best[0] = total
        start_at = [-1] * (n + 1)
        best_id = [model.unk_id] * (n + 1)
        limit = model.rebase_limit
        reach = 0
        f32 = array("f", [0.0])
        # deliberately UnigramModel._forward's loop again (rebase included), over cached edges
        for pos in range(n):
            here = best[pos]
            if limit is not None and (here < -limit or here > limit):
                for k in range(pos, reach + 1):
                    if k == pos or start_at[k] >= 0:
                        f32[0] = best[k] - here
                        best[k] = f32[0]
                here = 0.0
            for end, piece_id, score, _ in edges[pos]:
                if float32:
                    f32[0] = score + here
                    candidate = f32[0]
                else:
                    candidate = score + here
                if start_at[end] < 0 or candidate > best[end]:
                    best[end] = candidate
                    start_at[end] = pos
                    best_id[end] = piece_id
                if end > reach:
                    reach = end
        return tuple(backtrack(start_at, best_id, n)), best[n]


def _merge_unknowns(ids: list[int], unk: int) -> list[int]:
    """``ids`` with each run of ``unk`` cut to one (what :meth:`UnigramModel.finish` does)."""
    if ids.count(unk) < 2:
        return ids
    return [piece_id for k, piece_id in enumerate(ids) if piece_id != unk or k == 0 or ids[k - 1] != unk]
