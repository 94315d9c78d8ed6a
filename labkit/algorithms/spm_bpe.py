"""SentencePiece BPE: merge by *score*, not by rank, on text whose spaces are ``▁``.

A SentencePiece BPE model has no merge list. Each piece has a score (higher is better) and
encoding repeats one step until nothing applies: among all pairs of neighbouring symbols
whose concatenation is a piece of the vocabulary, merge the one whose result scores highest;
on a tie the leftmost pair wins. What is left is looked up: a piece becomes its id, a
symbol the vocabulary cannot spell becomes ``<unk>`` (neighbouring unknowns fuse into one)
or, with byte fallback, one ``<0xNN>`` piece per UTF-8 byte.

Two versions of the loop are here, and they make the same merges in the same order:

* :meth:`SpmBpeModel.merge_naive` is the textbook loop: scan every pair for the best, merge
  it, scan again (only the two pairs beside the merge are looked up anew). O(n²) per word,
  easy to read, and the fastest on short chunks.
* :meth:`SpmBpeModel.merge` is what sentencepiece's ``bpe_model.cc`` runs: symbols in a
  linked list, candidate pairs in a priority queue keyed by (score, left position), and
  entries that a merge made stale skipped when they surface. O(n log n).

Piece kinds (sentencepiece's types): only normal, user-defined and unused pieces can be
made by a merge; control (``<s>``), unknown and byte pieces never are. User-defined pieces
are cut out of the text whole before merging and never merged further. Unused pieces may
be made by a merge but are then split back into the two halves that made them.

Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> import labkit
    >>> from labkit.algorithms.spm_bpe import SpmBpeModel
    >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
    >>> model.encode("▁Hello▁world")
    [15043, 3186]
"""
from __future__ import annotations

import heapq
import re
from functools import lru_cache
from itertools import compress, count, repeat
from operator import add, and_, not_, or_
from typing import Callable, Iterable, Sequence

from labkit.algorithms.bytes_unicode import parse_byte_piece  # noqa: F401  (re-exported)
from labkit.algorithms.bpe import FIRST_LOOP_ID, bpe_rank_chunks
from labkit.algorithms.merge_step import MergeStep
from labkit.algorithms.piece_table import check_piece_table, unknown_id
from labkit.core import (
    TOKEN_BYTE,
    TOKEN_NORMAL,
    TOKEN_UNUSED,
    TOKEN_USER_DEFINED,
    LabkitError,
)

SPACE = "\u2581"  # '▁', sentencepiece's visible space
MERGEABLE_TYPES = frozenset({TOKEN_NORMAL, TOKEN_USER_DEFINED, TOKEN_UNUSED})
# up to this many characters, encode_spans merges with the rescanning loop (measured faster)
SHORT_TEXT_CHARS = 64


@lru_cache(maxsize=64)
def runs_of(char_class: str, shortest: int) -> re.Pattern:
    """A pattern that ``split`` cuts around runs of at least ``shortest`` characters of
    ``char_class`` (a regex class), keeping the runs: compiled once per class and length.

    Example:
        >>> runs_of("[0-9]", 2).split("a1b22c")
        ['a1b', '22', 'c']
    """
    return re.compile(f"({char_class}{{{shortest},}})")


def unjoinable_cuts(text: str, joinable) -> list[int]:
    """The positions i where ``text[i-1] + text[i]`` is in no token a merge can make (not in
    ``joinable``): the merges on either side of such a cut never meet.

    Example:
        >>> from labkit.algorithms.spm_bpe import unjoinable_cuts
        >>> unjoinable_cuts("abcab", {"ab"})
        [2, 3]
    """
    return list(compress(count(1), map(not_, map(joinable.__contains__, map(add, text, text[1:])))))  # in C: one pass


# past this many groups of characters (by what may stand before them), joined_runs gives up:
# the regex engine would try each group at every character, slower than unjoinable_cuts
JOINED_RUN_GROUPS = 48


def joined_runs(joinable: frozenset, known: frozenset | None = None) -> re.Pattern | None:
    """A pattern whose ``split`` keeps, as its odd items, each stretch of two or more characters
    joined pair by pair: every two neighbours in ``joinable``, or (when ``known`` is given) both
    outside ``known``, as two unknown characters fuse into one ``<unk>``. The even items hold the
    characters between, each a chunk of its own. These are the chunks of :meth:`SpmBpeModel.cut`
    found by the regex engine in one pass (in C), without a string for each one-character chunk.
    None when nothing is joinable or the characters fall into more than ``JOINED_RUN_GROUPS``
    groups.

    Each character after a stretch's first is matched as ``[ys](?<=[xs].)``: one of the ``ys``
    whose left neighbour is one of the ``xs`` that may stand before it (characters grouped by
    that set). The regex engine skips a branch at once when its first class does not match, and
    skips a position at once where the first character's class does not match.

    Example:
        >>> joined_runs(frozenset({"ab", "bc"})).split("xabcyab")
        ['x', 'abc', 'y', 'ab', '']
        >>> joined_runs(frozenset({"ab"}), known=frozenset("ab")).split("abxyab")
        ['', 'ab', '', 'xy', '', 'ab', '']
    """
    before: dict[str, set[str]] = {}
    for pair in joinable:
        before.setdefault(pair[1], set()).add(pair[0])
    groups: dict[frozenset, list[str]] = {}
    for right, lefts in before.items():
        groups.setdefault(frozenset(lefts), []).append(right)
    if len(groups) > JOINED_RUN_GROUPS or not (groups or known is not None):
        return None

    def one_of(members) -> str:
        return "[" + "".join(map(re.escape, sorted(members))) + "]"

    def none_of(members) -> str:
        return "[^" + "".join(map(re.escape, sorted(members))) + "]" if members else "(?s:.)"

    # the largest groups first: the branch is tried in order
    steps = [f"{one_of(rights)}(?<={one_of(lefts)}(?s:.))"
             for lefts, rights in sorted(groups.items(), key=lambda item: (-len(item[1]), sorted(item[1])))]
    starts = {pair[0] for pair in joinable}
    if known is None:
        first = one_of(starts)
    else:
        unknown = none_of(known)
        steps.append(f"{unknown}(?<={unknown}(?s:.))")
        first = none_of(known - starts)  # one class, so that the search can skip by it
    return re.compile(f"({first}(?:{'|'.join(steps)})++)")


def rescan(text: str, place: Callable[[str, int], int], nothing: int) -> list[str]:
    """The score-BPE loop on a short text, with nothing else to mind (:meth:`SpmBpeModel.merge_naive`
    without its trace, frozen symbols and unused pieces): join the best pair (the lowest place,
    the leftmost on a tie), look up again only the two pairs beside it, repeat. ``place(pair,
    nothing)`` is a joined pair's place among the distinct scores, ``nothing`` if it is no piece.

    Example:
        >>> rescan("abc", {"ab": 1, "bc": 0}.get, 2)
        ['a', 'bc']
    """
    symbols = list(text)
    places = list(map(place, map(add, symbols, symbols[1:]), repeat(nothing)))  # in C: one pass
    while places:
        best_place = min(places)
        if best_place == nothing:
            break
        best = places.index(best_place)  # the first of the best: the leftmost
        merged = symbols[best] + symbols.pop(best + 1)
        symbols[best] = merged
        del places[best]  # the pair just joined
        if best < len(places):  # the pair to its right, now starting with the joined symbol
            places[best] = place(merged + symbols[best + 1], nothing)
        if best:  # the pair to its left
            places[best - 1] = place(symbols[best - 1] + merged, nothing)
    return symbols


# what pairs of piece ids make, memoised for merge_buckets: at most about this many entries
PAIR_MEMO_ENTRIES = 1 << 20
# past this many pieces that share a score, merge_buckets assumes two of them meet in any text
# (each is looked for in the text otherwise)
TIED_PIECES_CHECKED = 64


def byte_piece(value: int) -> str:
    """The spelling of a byte-fallback piece.

    Example:
        >>> byte_piece(0x0A), byte_piece(0xE9)
        ('<0x0A>', '<0xE9>')
    """
    return f"<0x{value:02X}>"


class SpmBpeModel:
    """Score-based BPE over a SentencePiece vocabulary (pieces, scores, piece types).

    Example:
        >>> from labkit.algorithms.spm_bpe import SpmBpeModel
        >>> SpmBpeModel(["<unk>", "a", "b", "ab"], [0, -1, -2, -0.5], [2, 1, 1, 1]).pieces("ab")
        ['ab']

    (introduced in notebook ``03_bpe_sentencepiece``)
    """

    def __init__(
        self,
        tokens: Sequence[str],
        scores: Sequence[float],
        token_types: Sequence[int] | None = None,
        *,
        unk_id: int | None = None,
        byte_fallback: bool = False,
        reserved_lookup: bool = True,
    ):
        self.types = check_piece_table("SpmBpeModel", tokens, scores, token_types)
        self.tokens = list(tokens)
        self.scores = [float(s) for s in scores]
        mergeable: dict[str, int] = {}
        reserved: dict[str, int] = {}
        for index, (piece, kind) in enumerate(zip(self.tokens, self.types)):
            # sentencepiece keeps the first id of a duplicated spelling
            (mergeable if kind in MERGEABLE_TYPES else reserved).setdefault(piece, index)
        self.mergeable = mergeable
        # PieceToId: reserved pieces (control, unknown, byte) first, then the rest
        self.piece_to_id = {**mergeable, **reserved}
        self.unused = frozenset(i for i, kind in enumerate(self.types) if kind == TOKEN_UNUSED)
        # what a symbol left after merging is looked up in. sentencepiece 0.2.1+ looks in the
        # mergeable pieces only (bpe_model.cc: PieceToIdNoReserved), so a character spelled
        # like a CONTROL piece is unknown there (then <unk> or bytes), and a symbol that is
        # still an UNUSED piece after resegmenting (a single character: no merge made it, so
        # it has no halves) comes out unknown too (measured with sentencepiece 0.2.3: 'bbb'
        # with 'b' UNUSED is one <unk>); llama.cpp (GGUF) finds any piece (reserved_lookup=True)
        self.symbol_to_id = self.piece_to_id if reserved_lookup else {
            piece: index for piece, index in mergeable.items() if index not in self.unused}
        self.unk_id = unknown_id("SpmBpeModel", self.types, unk_id, required=False)
        self.user_defined = tuple(sorted(
            (t for t, kind in zip(self.tokens, self.types) if kind == TOKEN_USER_DEFINED and t),
            key=lambda s: (-len(s), s),
        ))
        # for merge_buckets: each mergeable piece's place among the distinct scores, best first
        distinct = sorted({self.scores[i] for i in mergeable.values()}, reverse=True)
        place = {score: rank for rank, score in enumerate(distinct)}
        self._score_rank = {piece: place[self.scores[i]] for piece, i in mergeable.items()}
        # pieces a merge can make that share their score with another (Llama's runs of ▁), by
        # score: where two of one group can both be made, their pairs merge left to right among
        # themselves and merge_buckets keeps a bucket per score, not per piece
        by_rank: dict[int, list[str]] = {}
        for piece in mergeable:
            if len(piece) > 1:
                by_rank.setdefault(self._score_rank[piece], []).append(piece)
        self.tied_groups = [tuple(group) for group in by_rank.values() if len(group) > 1]
        self.byte_fallback = bool(byte_fallback)
        self.byte_ids: list[int | None] = [self.piece_to_id.get(byte_piece(b)) for b in range(256)]
        self._user_by_first: dict[str, list[str]] = {}
        for symbol in self.user_defined:
            self._user_by_first.setdefault(symbol[0], []).append(symbol)
        self._pair_memo: dict[int, int] = {}
        # characters that are no mergeable piece yet sit inside a longer one (only an edited
        # model has them: a character piece made CONTROL): merge_buckets leaves them to merge
        self._merging_chars = frozenset(
            ch for piece in mergeable if len(piece) > 1 for ch in piece if ch not in mergeable)
        # every two characters that sit side by side in some mergeable piece: only those can be
        # joined by a merge. None (never cut) with unused pieces: their split-back halves are
        # remembered across the whole text, as sentencepiece does
        self._joinable = None if self.unused else frozenset(
            piece[k:k + 2] for piece in mergeable for k in range(len(piece) - 1))
        # characters that are pieces and sit in no longer piece (llama's digits): a run of them
        # is one token per character, looked up without merging (see isolated_runs)
        joined_chars = set("".join(self._joinable or ()))
        isolated = sorted(p for p in mergeable if len(p) == 1 and p not in joined_chars)
        self._isolated_class = "[" + "".join(map(re.escape, isolated)) + "]" \
            if isolated and self._joinable is not None else None
        # a character that is no piece (an unknown one): cut() keeps two of them together
        self._known_chars = frozenset(p for p in self.symbol_to_id if len(p) == 1)
        self._unknown_char_re = re.compile(
            "[^" + "".join(map(re.escape, sorted(self._known_chars))) + "]" if self._known_chars else "(?s:.)")
        self._runs_pattern: re.Pattern | None | bool = False  # runs_pattern() builds it

    @classmethod
    def from_vocab(cls, vocab) -> "SpmBpeModel":
        """The model of a VocabData (GGUF llama vocab or a SentencePiece BPE ``.model``).

        Example:
            >>> import labkit
            >>> from labkit.algorithms.spm_bpe import SpmBpeModel
            >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
            >>> len(model.pieces_to_ids(["▁Hello"]))
            1
        """
        if vocab.scores is None:
            raise LabkitError(f"{vocab.name}: SentencePiece BPE needs piece scores")
        return cls(
            vocab.tokens,
            vocab.scores,
            vocab.token_types,
            unk_id=vocab.specials.unk_id,
            byte_fallback=bool(vocab.options.get("byte_fallback", any(t == TOKEN_BYTE for t in vocab.token_types))),
            reserved_lookup=vocab.format != "spm_model",
        )

    # -- step 1: characters (user-defined pieces stay whole) ---------------------
    def initial_symbols(self, text: str) -> list[tuple[str, bool]]:
        """Split normalised text into (symbol, frozen) pairs: one per character, except a
        user-defined piece, which is one frozen symbol (longest match wins).

        Example:
            >>> import labkit
            >>> from labkit.algorithms.spm_bpe import SpmBpeModel
            >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
            >>> model.initial_symbols("▁ab")
            [('▁', False), ('a', False), ('b', False)]
        """
        if not self._user_by_first:
            return [(ch, False) for ch in text]
        out = []
        pos, n = 0, len(text)
        while pos < n:
            for symbol in self._user_by_first.get(text[pos], ()):
                if text.startswith(symbol, pos):
                    out.append((symbol, True))
                    pos += len(symbol)
                    break
            else:
                out.append((text[pos], False))
                pos += 1
        return out

    def cut(self, text: str) -> list[str]:
        """Normalised text in chunks that merge independently: cut between two characters that
        sit side by side in no mergeable piece (no merge can ever join them), except between two
        unknown characters, which fuse into one ``<unk>`` without byte fallback. The merges of
        the chunks, joined, are the merges of the text, so long inputs without spaces (digits,
        letters, CJK) merge in short pieces that a word cache can keep.
        Example:
            >>> import labkit
            >>> labkit.load("llama-spm", engine="labkit").model.cut("▁2024")
            ['▁', '2', '0', '2', '4']
        """
        joinable = self._joinable
        if joinable is None or len(text) < 2:
            return [text]
        if not self.byte_fallback and self._unknown_char_re.search(text):
            # no cut between two unknown characters: a cut needs a known one on either side
            is_known = list(map(self.symbol_to_id.__contains__, text))
            unjoinable = map(not_, map(joinable.__contains__, map(add, text, text[1:])))
            cuts = list(compress(count(1), map(and_, unjoinable, map(or_, is_known, is_known[1:]))))  # in C
        else:
            cuts = unjoinable_cuts(text, joinable)
        if not cuts:
            return [text]
        return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]

    def runs_pattern(self) -> re.Pattern | None:
        """The :func:`joined_runs` pattern of this model's chunks (built on first use), None where
        :meth:`cut` never cuts (unused pieces) or the pattern would be slower than cutting.

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-bpe", engine="labkit").model
            >>> model.runs_pattern().split("▁2024▁the"), model.cut("▁2024▁the")
            (['▁2024', '▁the', ''], ['▁', '2', '0', '2', '4', '▁the'])
        """
        if self._runs_pattern is False:
            # two unknown characters fuse into one <unk> without byte fallback: they stay together
            known = None if self.byte_fallback else self._known_chars
            self._runs_pattern = None if self._joinable is None else joined_runs(self._joinable, known)
        return self._runs_pattern

    def isolated_runs(self, text: str, shortest: int = 1) -> list[str]:
        """``text`` split around runs (of at least ``shortest``) of isolated characters (pieces
        found in no longer piece): odd items are such runs, each character its own token; even
        items the text between.
        Example:
            >>> import labkit
            >>> model = labkit.load("llama-spm", engine="labkit").model
            >>> model.isolated_runs("▁ab2024cd"), model.isolated_runs("▁ab2024cd", shortest=5)
            (['▁ab', '2024', 'cd'], ['▁ab2024cd'])
        """
        if self._isolated_class is None:
            return [text]
        return runs_of(self._isolated_class, shortest).split(text)

    # -- step 2a: the textbook loop ---------------------------------------------
    def merge_naive(self, text: str, trace: list | None = None) -> list[str]:
        """Merge greedily by score: find the best pair, merge it, look up the two pairs it
        changed, find the best again (O(n) per merge, each scan one ``min`` over a list).

        Returns the final symbols (unused pieces already split back). With ``trace`` (a
        list), appends one :class:`~labkit.algorithms.merge_step.MergeStep` per merge.
        Example:
            >>> import labkit
            >>> from labkit.algorithms.spm_bpe import SpmBpeModel
            >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
            >>> model.merge_naive("▁Hello")
            ['▁Hello']
        """
        if self._user_by_first:
            start_symbols = self.initial_symbols(text)
            symbols = [s for s, _ in start_symbols]
            frozen = [f for _, f in start_symbols]
        else:  # no user-defined pieces: one symbol per character, none frozen
            symbols, frozen = list(text), None
        mergeable, scores, unused = self.mergeable, self.scores, self.unused
        # a pair's place among the distinct scores (0 = best); `nothing` for a pair that is no piece
        place, nothing = self._score_rank.get, len(self._score_rank) + 1
        halves: dict[str, tuple[str, str]] = {}
        step = 0
        if frozen is None:  # in C: one pass of map over the pairs of neighbours
            places = list(map(place, map(add, symbols, symbols[1:]), repeat(nothing)))
        else:
            places = [nothing if frozen[i] or frozen[i + 1] else place(symbols[i] + symbols[i + 1], nothing)
                      for i in range(len(symbols) - 1)]
        while places:
            best_place = min(places)
            if best_place == nothing:
                break
            best = places.index(best_place)  # the first of the best: on a tie the leftmost pair wins
            left, right = symbols[best], symbols[best + 1]
            merged = left + right
            if trace is not None:
                trace.append(MergeStep(step, best, left, right, merged, score=scores[mergeable[merged]],
                                       parts_before=tuple(symbols)))
            if unused and mergeable[merged] in unused:
                halves[merged] = (left, right)
            symbols[best : best + 2] = [merged]
            # only the two pairs touching the new symbol change: look those up again
            if best + 1 < len(symbols):
                after = symbols[best + 1]
                places[best : best + 2] = [nothing if frozen and frozen[best + 2] else place(merged + after, nothing)]
            else:
                del places[best]
            if best > 0:
                places[best - 1] = nothing if frozen and frozen[best - 1] else place(symbols[best - 1] + merged, nothing)
            if frozen is not None:
                frozen[best : best + 2] = [False]
            step += 1
        return self._resegment_all(symbols, halves)

    # -- step 2b: the priority queue, as sentencepiece runs it ------------------
    def merge(self, text: str, trace: list | None = None) -> list[str]:
        """Merge greedily by score with a priority queue (sentencepiece's algorithm).

        Same result and same merge order as :meth:`merge_naive`. With ``trace``, appends
        the same :class:`~labkit.algorithms.merge_step.MergeStep` list (O(n) per step while tracing).
        Example:
            >>> import labkit
            >>> from labkit.algorithms.spm_bpe import SpmBpeModel
            >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
            >>> model.merge("▁Hello▁world")
            ['▁Hello', '▁world']
        """
        start_symbols = self.initial_symbols(text)
        n = len(start_symbols)
        if n == 0:
            return []
        pieces = [s for s, _ in start_symbols]
        frozen = [f for _, f in start_symbols]
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        mergeable, scores, unused = self.mergeable, self.scores, self.unused
        halves: dict[str, tuple[str, str]] = {}
        # heap entries: (-score, left, right, merged length); Python's heap is a min-heap,
        # so the highest score comes first and, on a tie, the smallest left index
        agenda: list[tuple[float, int, int, int]] = []
        push = heapq.heappush

        def add_pair(left: int, right: int) -> None:
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                return
            piece = pieces[left] + pieces[right]
            index = mergeable.get(piece)
            if index is None:
                return
            push(agenda, (-scores[index], left, right, len(piece)))
            if index in unused:
                # like sentencepiece: remember the latest pair seen making this unused piece
                halves[piece] = (pieces[left], pieces[right])

        for i in range(1, n):
            add_pair(i - 1, i)
        pop = heapq.heappop
        step = 0
        while agenda:
            neg_score, left, right, size = pop(agenda)
            left_piece, right_piece = pieces[left], pieces[right]
            # stale: one side was merged away or grew since this entry was pushed
            if not left_piece or not right_piece or len(left_piece) + len(right_piece) != size:
                continue
            merged = left_piece + right_piece
            if trace is not None:
                live = _live(pieces, nxt)
                trace.append(MergeStep(step, live.index(left), left_piece, right_piece, merged, score=-neg_score,
                                       parts_before=tuple(pieces[k] for k in live)))
            pieces[left] = merged
            pieces[right] = ""
            following = nxt[right]
            nxt[left] = following
            if following >= 0:
                prv[following] = left
            step += 1
            add_pair(prv[left], left)
            add_pair(left, following)
        return self._resegment_all([pieces[k] for k in _live(pieces, nxt)], halves)

    # -- step 2c: buckets by score, for long texts -------------------------------
    def merge_buckets(self, text: str) -> list[str]:
        """The merges of :meth:`merge`, several times faster on long texts: the bucket loop of
        byte-level BPE (:func:`labkit.algorithms.bpe.bpe_rank_chunks`) run over piece ids, a
        pair's rank being its merged piece's place among the distinct scores (best first): a
        bucket per merged piece, or per score where two pieces share one (``ties``).

        Symbols that never merge (unknown characters, user-defined pieces cut out whole) get
        stand-in ids past the vocabulary. With unused pieces this is :meth:`merge` itself (the
        halves an unused piece splits back into are the last pair the queue saw make it).
        Example:
            >>> import labkit
            >>> from labkit.algorithms.spm_bpe import SpmBpeModel
            >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
            >>> model.merge_buckets("▁Hello▁world")
            ['▁Hello', '▁world']
        """
        if self.unused:
            return self.merge(text)
        if not self._user_by_first and self._joinable is not None and self._joinable.isdisjoint(map(add, text, text[1:])):
            return list(text)  # no two neighbours sit side by side in any piece: nothing merges
        tokens, size = self.tokens, len(self.tokens)
        stand_in: dict[str, int] = {}  # a symbol that never merges -> its id past the vocabulary
        if self._user_by_first:
            start = self.initial_symbols(text)
            symbols = [s for s, _ in start]
            ids = [None if frozen else self.mergeable.get(s) for s, frozen in start]
            loose = [s for s, frozen in start if not frozen]
        else:
            symbols, ids = text, list(map(self.mergeable.get, text))
            loose = text
        if None in ids:
            # a character that is no mergeable piece (a CONTROL piece's spelling, say) still
            # merges by spelling into a longer piece: ids cannot stand for it, the queue can
            if self._merging_chars and not self._merging_chars.isdisjoint(loose):
                return self.merge(text)
            ids = [size + stand_in.setdefault(s, len(stand_in)) if i is None else i for i, s in zip(ids, symbols)]
        if size + len(stand_in) >= FIRST_LOOP_ID:
            return self.merge(text)
        if len(self._pair_memo) > PAIR_MEMO_ENTRIES:
            self._pair_memo.clear()  # bounded memory
        merged = bpe_rank_chunks(ids, self._pair_memo, self._pair, ties=self.scores_tie_in(text))
        if not stand_in:
            return [tokens[i] for i in merged]
        spelling = {size + k: s for s, k in stand_in.items()}
        return [tokens[i] if i < size else spelling[i] for i in merged]

    def scores_tie_in(self, text: str) -> bool:
        """Whether two pieces of one score could both be made from ``text`` (a piece a merge
        makes is a stretch of the text, so each must occur in it). Many tied pieces: assumed.

        Example (Llama's runs of ▁ share one score; '▁▁' alone is one of them, '▁▁▁' holds two):
            >>> import labkit
            >>> from labkit.algorithms.spm_bpe import SpmBpeModel
            >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
            >>> model.scores_tie_in("▁▁a"), model.scores_tie_in("▁▁▁a")
            (False, True)
        """
        if sum(map(len, self.tied_groups)) > TIED_PIECES_CHECKED:
            return True
        return any(sum(piece in text for piece in group) > 1 for group in self.tied_groups)

    def _pair(self, left: int, right: int) -> int:
        """What merging two piece ids makes, packed for bpe_rank_chunks and memoised."""
        size = len(self.tokens)
        value = -1
        if left < size and right < size:
            piece = self.tokens[left] + self.tokens[right]
            index = self.mergeable.get(piece)
            if index is not None:
                value = (self._score_rank[piece] << 24) | index
        self._pair_memo[(left << 24) | right] = value
        return value

    def _resegment_all(self, symbols: list[str], halves: dict[str, tuple[str, str]]) -> list[str]:
        if not self.unused:
            return symbols
        out: list[str] = []
        for symbol in symbols:
            self._resegment(symbol, halves, out)
        return out

    def _resegment(self, symbol: str, halves: dict[str, tuple[str, str]], out: list[str]) -> None:
        # an unused piece is never emitted: split it back into the pair that made it
        index = self.piece_to_id.get(symbol)
        if index is None or index not in self.unused or symbol not in halves:
            out.append(symbol)
            return
        left, right = halves[symbol]
        self._resegment(left, halves, out)
        self._resegment(right, halves, out)

    # -- step 3: pieces -> ids ----------------------------------------------------
    def pieces_to_ids(self, symbols: Iterable[str]) -> list[tuple[int, int, int]]:
        """Look up merged symbols: (id, start, end) with char offsets into the normalised
        text. Unknown symbols become ``<0xNN>`` ids with byte fallback (each spanning its
        character), else ``<unk>``, and a run of unknowns fuses into one ``<unk>``.

        Example:
            >>> import labkit
            >>> from labkit.algorithms.spm_bpe import SpmBpeModel
            >>> model = SpmBpeModel.from_vocab(labkit.load("llama-spm").vocab)
            >>> model.pieces_to_ids(['▁', '🦙'])
            [(29871, 0, 1), (243, 1, 2), (162, 1, 2), (169, 1, 2), (156, 1, 2)]
        """
        lookup = self.symbol_to_id
        unk = self.unk_id
        out: list[tuple[int, int, int]] = []
        pos = 0
        previous_unknown = False
        for symbol in symbols:
            end = pos + len(symbol)
            index = lookup.get(symbol, unk)
            if index is None:
                raise LabkitError(f"SpmBpeModel: {symbol!r} is not in the vocabulary and the model has no unknown piece")
            if index == unk:
                if self.byte_fallback:
                    for value in symbol.encode("utf-8", errors="surrogatepass"):
                        byte_id = self.byte_ids[value]
                        out.append((unk if byte_id is None else byte_id, pos, end))
                elif previous_unknown:
                    out[-1] = (unk, out[-1][1], end)
                else:
                    out.append((unk, pos, end))
                previous_unknown = not self.byte_fallback
            else:
                out.append((index, pos, end))
                previous_unknown = False
            pos = end
        return out

    # -- the whole model step -----------------------------------------------------
    def encode_spans(self, text: str) -> list[tuple[int, int, int]]:
        """Normalised text -> (id, start, end) per token.

        Example (llama-spm):
            >>> import labkit
            >>> labkit.load("llama-spm", engine="labkit").model.encode_spans("▁Hello▁world")
            [(15043, 0, 6), (3186, 6, 12)]
        """
        # a short text merges fastest by rescanning (no queues to build); a long one by buckets
        short = len(text) <= SHORT_TEXT_CHARS and not self.unused  # (unused halves: kept as the queue sees them)
        return self.pieces_to_ids(self._rescanned(text) if short else self.merge_buckets(text))

    def _rescanned(self, text: str) -> list[str]:
        """A short text's symbols by rescanning: :func:`rescan`, or :meth:`merge_naive` where
        user-defined pieces are cut out first."""
        if self._user_by_first:
            return self.merge_naive(text)
        return rescan(text, self._score_rank.get, len(self._score_rank) + 1)

    def encode_ids(self, text: str) -> list[int]:
        """Normalised text -> ids, as :meth:`encode` gives them, without building spans: each
        merged symbol looked up in one pass (``pieces_to_ids`` only when one is unknown).

        Example (llama-spm):
            >>> import labkit
            >>> labkit.load("llama-spm", engine="labkit").model.encode_ids("▁Hello▁world")
            [15043, 3186]
        """
        short = len(text) <= SHORT_TEXT_CHARS and not self.unused
        return self.symbols_to_ids(self._rescanned(text) if short else self.merge_buckets(text))

    def symbols_to_ids(self, symbols: list[str]) -> list[int]:
        """:meth:`pieces_to_ids` without the spans: every symbol looked up in one pass, the
        general loop only where one is unknown (they fuse, or fall back to bytes).

        Example (llama-spm):
            >>> import labkit
            >>> labkit.load("llama-spm", engine="labkit").model.symbols_to_ids(["▁Hello", "▁world"])
            [15043, 3186]
        """
        ids = list(map(self.symbol_to_id.get, symbols))  # in C: one pass
        if None in ids or self.unk_id in ids:  # unknowns fuse or fall back to bytes: the general loop
            return [index for index, _, _ in self.pieces_to_ids(symbols)]
        return ids

    def encode(self, text: str) -> list[int]:
        """Normalised text -> ids.

        Example (llama-spm; a plain space is not ``▁``, so this text must be normalised first):
            >>> import labkit
            >>> model = labkit.load("llama-spm", engine="labkit").model
            >>> model.encode("▁Hello▁world"), model.encode("▁Hello world")
            ([15043, 3186], [15043, 35, 11526])
        """
        return [index for index, _, _ in self.encode_spans(text)]

    def pieces(self, text: str) -> list[str]:
        """Normalised text -> token strings.

        Example:
            >>> import labkit
            >>> labkit.load("llama-spm", engine="labkit").model.pieces("▁Hello▁world")
            ['▁Hello', '▁world']
        """
        return [self.tokens[index] for index, _, _ in self.encode_spans(text)]


def _live(pieces: list[str], nxt: list[int]) -> list[int]:
    """The indices still in the linked list of pieces, in order (the first piece never merges away)."""
    out, index = [], 0
    while index >= 0:
        out.append(index)
        index = nxt[index]
    return out


def chunk_rule(tokens: Sequence[str], token_types: Sequence[int]) -> str | None:
    """Where normalised text can be cut into independent chunks without changing the result.

    A merge never makes a piece that crosses a cut if no mergeable piece does, so:
    ``"prefix"`` when no piece has a ``▁`` after another character (cut before each run of
    ``▁``: llama, botchan), ``"suffix"`` when no piece has a character after a ``▁`` (cut
    after each run), else None (do not cut). Cutting lets an engine cache whole words.
    Example:
        >>> from labkit.algorithms.spm_bpe import chunk_rule
        >>> chunk_rule(["▁the", "a"], [1, 1])
        'prefix'
    """
    prefix_ok = suffix_ok = True
    for piece, kind in zip(tokens, token_types):
        if kind not in MERGEABLE_TYPES or SPACE not in piece:
            continue
        core = piece.lstrip(SPACE)
        if SPACE in core:
            prefix_ok = False
        core = piece.rstrip(SPACE)
        if SPACE in core:
            suffix_ok = False
        if not prefix_ok and not suffix_ok:
            return None
    return "prefix" if prefix_ok else "suffix"
