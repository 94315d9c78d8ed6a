"""Unigram tokenization: a trie over the pieces, the lattice of every piece that fits, and
the Viterbi pass that picks the segmentation with the highest total score.

Each piece has a score (its log probability). Over the normalised string, position by
position, the forward pass keeps the best total score of any segmentation that ends at each
offset (``tokenization_results`` in llama.cpp's words). At offset ``i`` a trie walk lists the
pieces that start there; a piece ``[i, j)`` offers ``best[i] + score`` to offset ``j``, and
the higher offer wins (the first one on a tie). A character no single-character piece covers
gets the unknown piece, scored ``min score - 10``. Walking back from the end along the
winners gives the tokens; consecutive unknowns merge into one.

Three reference implementations agree on this and differ only in small print, which
:class:`UnigramModel` exposes as options:

* sentencepiece (``sentencepiece=True``, the default) adds in 32-bit floats (each offer
  ``best[i] + score`` is rounded to a float before it is compared), skips UNUSED pieces and
  gives a user-defined piece the score ``(len(bytes) - 1) * 0.1`` (rounded to a float). Its
  0.2.3 release also keeps the running total small: when the best score at the offset it is
  about to extend from lies outside [-1e5, 1e5], it subtracts that score from every offset
  reached so far (``REBASE_LIMIT``). Both facts were read from the machine code of the 0.2.3
  wheel and confirmed on whole texts: without the rebase a float running sum drifts from
  sentencepiece after about 1e5 of total score (6 ids on botchan.txt, 786 on a mixed-script
  text); with it, 0 on both.
* ``tokenizers``' Unigram (``sentencepiece=False``) adds in doubles, with no rebase.
* llama.cpp's ``llm_tokenizer_ugm`` adds in doubles today (``score_sum`` is a double in
  ``src/llama-vocab.cpp``, commit 00ad355e, "to make tokenization results exactly the same
  as in the HF tokenizer"; earlier releases kept a float), while its unknown score
  ``min_score - 10`` is a float. labkit serves GGUF files like ``tokenizers`` (double
  sums), which is what the book checks them against.

The rounding matters: ``"......" + "."`` and ``"." + "......"`` score the same in exact
arithmetic, and only the rounding of the running sum decides between them.

Offsets here are character offsets into the normalised string (sentencepiece and llama.cpp
count UTF-8 bytes; since pieces are whole characters the segmentations are the same).
Introduced in notebook ``05_unigram_trie_viterbi``.

Example:
    >>> from labkit.algorithms.unigram import UnigramModel
    >>> UnigramModel(["<unk>", "▁a", "b"], [0, -1, -2], [2, 1, 1]).encode("▁ab")
    [(1, 0, 2), (2, 2, 3)]
"""
from __future__ import annotations

import heapq
import math
from array import array
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from labkit.algorithms.bytes_unicode import parse_byte_piece
from labkit.algorithms.piece_table import check_piece_table, unknown_id
from labkit.core import (
    TOKEN_BYTE,
    TOKEN_NORMAL,
    TOKEN_UNUSED,
    TOKEN_USER_DEFINED,
    LabkitError,
)

UNK_PENALTY = 10.0
REBASE_LIMIT = 1e5  # sentencepiece 0.2.3 rebases its float running total past this magnitude
USER_DEFINED_BONUS = 0.1  # sentencepiece: a user-defined piece scores (bytes - 1) * 0.1
_F32 = array("f", [0.0])


def to_float32(value: float) -> float:
    """Round a Python float to the nearest 32-bit float (what a C ``float`` variable keeps).

    Example:
        >>> from labkit.algorithms.unigram import to_float32
        >>> to_float32(0.1)
        0.10000000149011612
    """
    _F32[0] = value
    return _F32[0]


def _finite_score(score, index: int, float32: bool = True) -> float:
    """A piece's score as a float32 value (or a double), refused when it is not a finite
    number a float32 holds."""
    try:
        value = float(score)
    except (OverflowError, TypeError, ValueError):
        raise LabkitError(f"UnigramModel: the score of piece {index} is not a number a float can hold ({str(score)[:40]})") from None
    if not math.isfinite(value) or abs(value) > 3.4028234663852886e38:
        raise LabkitError(f"UnigramModel: the score of piece {index} is {value!r}; scores must be finite float32 values")
    return to_float32(value) if float32 else value


def split_words(text: str) -> list[str]:
    """Cut normalised text before each '▁' (the pieces between cuts are segmented alone).

    Example:
        >>> from labkit.algorithms.unigram import split_words
        >>> split_words("▁the▁▁cat")
        ['▁the', '▁', '▁cat']
    """
    parts = text.split("\u2581")
    words = ["\u2581" + w for w in parts[1:]]
    if parts[0]:
        words.insert(0, parts[0])
    return words


# ----------------------------------------------------------------------------- tries


class DictTrie:
    """A character trie made of nested dicts: the plainest way to find every piece that
    starts at a position. Each node is a dict from the next character to the child node; the
    key ``None`` holds the id of the piece that ends there.

    Example:
        >>> from labkit.algorithms.unigram import DictTrie
        >>> DictTrie({"▁a": 1, "▁ab": 2}).prefixes("▁abc")
        [(2, 1), (3, 2)]

    (introduced in notebook ``05_unigram_trie_viterbi``)
    """

    def __init__(self, pieces: dict[str, int] | Iterable[tuple[str, int]] = ()):
        self.root: dict = {}
        self.size = 0
        items = pieces.items() if isinstance(pieces, dict) else pieces
        for piece, piece_id in items:
            self.insert(piece, piece_id)

    def insert(self, piece: str, piece_id: int) -> None:
        """Add ``piece`` with ``piece_id`` (a later insert of the same piece keeps the first id).

        Example:
            >>> trie = DictTrie()
            >>> trie.insert("▁the", 5)
            >>> trie.insert("▁the", 9)
            >>> trie.prefixes("▁then"), trie.size
            ([(4, 5)], 1)
        """
        if not isinstance(piece, str) or not piece:
            raise LabkitError(f"DictTrie.insert: a piece must be a non-empty str, got {piece!r}")
        node = self.root
        for ch in piece:
            node = node.setdefault(ch, {})
        if None not in node:
            node[None] = piece_id
            self.size += 1

    def get(self, piece: str) -> int | None:
        """The id of exactly ``piece``, or None.

        Example:
            >>> from labkit.algorithms.unigram import DictTrie
            >>> DictTrie({"ab": 3}).get("ab")
            3
        """
        node = self.root
        for ch in piece:
            node = node.get(ch)
            if node is None:
                return None
        return node.get(None)

    def prefixes(self, text: str, start: int = 0) -> list[tuple[int, int]]:
        """Every piece that starts at ``text[start]``: (end offset, id), shortest first.

        Example:
            >>> from labkit.algorithms.unigram import DictTrie
            >>> DictTrie({"a": 0, "ab": 1}).prefixes("xab", 1)
            [(2, 0), (3, 1)]
        """
        out = []
        node = self.root
        for j in range(start, len(text)):
            node = node.get(text[j])
            if node is None:
                break
            piece_id = node.get(None)
            if piece_id is not None:
                out.append((j + 1, piece_id))
        return out

    def walk(self, text: str, start: int = 0) -> list[dict]:
        """The trie walk from ``start`` step by step, for teaching: one row per character read.

        Example:
            >>> from labkit.algorithms.unigram import DictTrie
            >>> DictTrie({"▁a": 1}).walk("▁ab")[1]  # doctest: +ELLIPSIS
            {'offset': 1, 'char': 'a', 'found': True, 'piece_id': 1, ...}
        """
        rows = []
        node = self.root
        for j in range(start, len(text)):
            child = node.get(text[j])
            row = {"offset": j, "char": text[j], "found": child is not None}
            if child is not None:
                row["piece_id"] = child.get(None)
                row["prefix"] = text[start : j + 1]
                row["children"] = sum(1 for k in child if k is not None)
            rows.append(row)
            if child is None:
                break
            node = child
        return rows


class PieceTrie:
    """The trie the engine walks: nested dicts whose entries are ``(child, id)`` pairs, so
    each step costs one dict lookup (id -1 where no piece ends).

    Example:
        >>> from labkit.algorithms.unigram import PieceTrie
        >>> PieceTrie({"▁a": 1, "▁ab": 2}).prefixes("▁abc")
        [(2, 1), (3, 2)]
    """

    def __init__(self, pieces: dict[str, int] | Iterable[tuple[str, int]] = ()):
        self.root: dict = {}
        self.size = 0
        self.max_length = 0
        items = pieces.items() if isinstance(pieces, dict) else pieces
        for piece, piece_id in items:
            self.insert(piece, piece_id)

    def insert(self, piece: str, piece_id: int) -> None:
        """Add ``piece``; the first id given for a piece is kept (sentencepiece's rule)."""
        if not isinstance(piece, str) or not piece:
            raise LabkitError(f"PieceTrie.insert: a piece must be a non-empty str, got {piece!r}")
        node = self.root
        last = len(piece) - 1
        for k, ch in enumerate(piece):
            entry = node.get(ch)
            if entry is None:
                entry = node[ch] = [{}, -1]
            if k == last and entry[1] < 0:
                entry[1] = piece_id
                self.size += 1
            node = entry[0]
        self.max_length = max(self.max_length, len(piece))

    # DictTrie.prefixes above is the readable twin of this walk (one lookup per step here)
    def prefixes(self, text: str, start: int = 0) -> list[tuple[int, int]]:
        """Every piece starting at ``text[start]``: (end offset, id), shortest first."""
        out = []
        node = self.root
        for j in range(start, len(text)):
            entry = node.get(text[j])
            if entry is None:
                break
            node, piece_id = entry
            if piece_id >= 0:
                out.append((j + 1, piece_id))
        return out


# ----------------------------------------------------------------------------- the lattice


@dataclass(frozen=True)
class LatticeNode:
    """One candidate piece in the lattice: ``text[start:end]`` is piece ``id`` with ``score``.

    Example:
        >>> from labkit.algorithms.unigram import LatticeNode
        >>> LatticeNode(0, 2, 37, "▁a", -3.1, "normal")
        LatticeNode(start=0, end=2, id=37, piece='▁a', score=-3.1, kind='normal')
    """

    start: int
    end: int
    id: int
    piece: str
    score: float
    kind: str  # "normal" | "user_defined" | "unknown"


@dataclass
class Lattice:
    """Everything the Viterbi pass saw, as plain data for tables and drawings.

    ``nodes`` are every candidate piece; ``best_score[j]`` / ``best_start[j]`` /
    ``best_id[j]`` the winner ending at offset ``j`` (llama.cpp's ``tokenization_results``);
    ``path`` the indices into ``nodes`` of the chosen segmentation, left to right.

    Example:
        >>> import labkit
        >>> model = labkit.load("botchan-unigram", engine="labkit").model
        >>> lat = model.lattice("▁What▁is▁LoRA?")
        >>> [lat.nodes[i].piece for i in lat.path]
        ['▁What', '▁is', '▁', 'L', 'o', 'R', 'A', '?']
    """

    text: str
    nodes: list[LatticeNode]
    best_score: list[float]
    best_start: list[int]
    best_id: list[int]
    path: list[int]
    offers: list[dict] = field(default_factory=list)

    @property
    def best_path(self) -> list[LatticeNode]:
        return [self.nodes[i] for i in self.path]

    @property
    def score(self) -> float:
        return self.best_score[len(self.text)] if self.text else 0.0

    def results_table(self) -> list[dict]:
        """``tokenization_results`` position by position: the best segmentation ending at
        each offset (its score, its last piece and where that piece starts).

        Example (a notebook shows it as ``pd.DataFrame(lattice.results_table())``):
            >>> import labkit
            >>> lattice = labkit.load("botchan-unigram", engine="labkit").model.lattice("▁ab")
            >>> [(row["offset"], row["last_piece"], row["on_best_path"]) for row in lattice.results_table()]
            [(0, '', True), (1, '▁', False), (2, '▁a', True), (3, 'b', True)]
        """
        rows = []
        on_path = {self.nodes[i].end for i in self.path} | {0}
        for j in range(len(self.text) + 1):
            start = self.best_start[j]
            rows.append({
                "offset": j,
                "char": self.text[j - 1] if j else "",
                "best_score": self.best_score[j],
                "last_piece": self.text[start:j] if j else "",
                "last_id": self.best_id[j] if j else None,
                "starts_at": start if j else None,
                "on_best_path": j in on_path,
            })
        return rows

    def nodes_table(self) -> list[dict]:
        """Every candidate piece: start, end, id, piece, score, kind, on the best path.

        Example:
            >>> import labkit
            >>> lattice = labkit.load("botchan-unigram", engine="labkit").model.lattice("▁ab")
            >>> [(row["piece"], row["best"]) for row in lattice.nodes_table()]
            [('▁', False), ('▁a', True), ('a', False), ('b', True)]
        """
        chosen = set(self.path)
        return [
            {"start": n.start, "end": n.end, "id": n.id, "piece": n.piece, "score": n.score, "kind": n.kind,
             "best": i in chosen}
            for i, n in enumerate(self.nodes)
        ]

    def __repr__(self) -> str:
        pieces = " | ".join(n.piece for n in self.best_path)
        return f"<Lattice {self.text!r}: {len(self.nodes)} candidate pieces, best path {pieces!r}, score {self.score:.4f}>"


def backtrack(start_at: Sequence[int], best_id: Sequence[int], end: int) -> list[tuple[int, int, int]]:
    """Follow the best path back from ``end``: (id, start, end) per piece, left to right.

    Example:
        >>> from labkit.algorithms.unigram import backtrack
        >>> backtrack([-1, 0, 1], [0, 5, 6], 2)
        [(5, 0, 1), (6, 1, 2)]
    """
    out = []
    while end > 0:
        start = start_at[end]
        out.append((best_id[end], start, end))
        end = start
    out.reverse()
    return out


# ----------------------------------------------------------------------------- the model


class UnigramModel:
    """A Unigram model over normalised text: the trie, the scores and the Viterbi pass.

    ``pieces``/``scores``/``types`` are per id (types in sentencepiece's numbering). CONTROL
    and BYTE pieces never match text; UNUSED ones only with ``sentencepiece=False``.

    Example:
        >>> import labkit
        >>> from labkit.algorithms.unigram import UnigramModel
        >>> vocab = labkit.load("botchan-unigram").vocab
        >>> UnigramModel(vocab.tokens, vocab.scores, vocab.token_types).encode_pieces("▁Hello")
        ['▁He', 'll', 'o']

    (introduced in notebook ``05_unigram_trie_viterbi``)
    """

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int] | None = None,
        *,
        unk_id: int | None = None,
        sentencepiece: bool = True,
        byte_fallback: bool = False,
        float32_sums: bool | None = None,
        score_types: Sequence[int] | None = None,
    ):
        self.types = check_piece_table("UnigramModel", pieces, scores, types)
        # llama.cpp asks whether a piece is user-defined (score 0) at encode time, after its
        # load-time rules may have retyped it, while its lattice holds the stored types
        score_types = self.types if score_types is None else list(score_types)
        if len(score_types) != len(self.types):
            raise LabkitError(f"UnigramModel: {len(score_types)} score types for {len(self.types)} pieces")
        self.pieces = list(pieces)
        self.sentencepiece = bool(sentencepiece)
        self.float32_sums = self.sentencepiece if float32_sums is None else bool(float32_sums)
        # the rebase is sentencepiece's, and only means something with float sums
        self.rebase_limit = REBASE_LIMIT if (self.sentencepiece and self.float32_sums) else None
        self.byte_fallback = bool(byte_fallback)
        normal_scores = [_finite_score(score, i, self.float32_sums) for i, (score, kind) in enumerate(zip(scores, self.types))
                         if kind == TOKEN_NORMAL]
        self.unk_id = unknown_id("UnigramModel", self.types, unk_id, required=True)
        # the minimum over NORMAL pieces: a float in sentencepiece, a double in tokenizers
        self.min_score = min(normal_scores) if normal_scores else 3.4028234663852886e38
        # sentencepiece subtracts in floats; tokenizers in doubles
        self.unk_score = to_float32(self.min_score - UNK_PENALTY) if self.float32_sums else self.min_score - UNK_PENALTY
        self.scores: list[float] = []
        matchable = (TOKEN_NORMAL, TOKEN_USER_DEFINED) if self.sentencepiece else (TOKEN_NORMAL, TOKEN_USER_DEFINED, TOKEN_UNUSED)
        self.trie = PieceTrie()
        for i, (piece, score, kind, score_kind) in enumerate(zip(self.pieces, scores, self.types, score_types)):
            if score_kind == TOKEN_USER_DEFINED:
                if self.sentencepiece:
                    # sentencepiece 0.2.3's machine code: (bytes - 1) * 0.1 in double, stored as float
                    score = to_float32((len(piece.encode("utf-8")) - 1) * USER_DEFINED_BONUS)
                else:
                    score = 0.0
            else:
                score = _finite_score(score, i, self.float32_sums)
            self.scores.append(score)
            if kind in matchable and piece:
                self.trie.insert(piece, i)
        self.byte_ids: dict[int, int] = {}
        if self.byte_fallback:
            for i, (piece, kind) in enumerate(zip(self.pieces, self.types)):
                value = parse_byte_piece(piece) if kind == TOKEN_BYTE else None
                if value is not None:
                    self.byte_ids[value] = i
        self.word_boundary = self._word_boundary_ok()

    def _word_boundary_ok(self) -> bool:
        """True when no matchable piece holds '▁' after its first char: then every
        segmentation breaks just before each '▁', and words can be segmented one at a time."""
        stack = [(self.trie.root, 0)]
        while stack:
            node, depth = stack.pop()
            for ch, (child, _) in node.items():
                if ch == "\u2581" and depth > 0:
                    return False
                stack.append((child, depth + 1))
        return True

    # -- the forward pass --------------------------------------------------------
    def candidates(self, text: str, pos: int) -> list[tuple[int, int, float, bool]]:
        """The lattice edges leaving offset ``pos``: (end, id, score, is_unknown) for every piece
        starting there, shortest first, plus one unknown character when no piece is one
        character long (so the lattice always reaches the end).

        Example:
            >>> from labkit.algorithms.unigram import UnigramModel
            >>> UnigramModel(["<unk>", "▁a", "b", "▁"], [0, -1, -2, -3], [2, 1, 1, 1]).candidates("▁ab", 0)
            [(1, 3, -3.0, False), (2, 1, -1.0, False)]
        """
        out = [(end, piece_id, self.scores[piece_id], False) for end, piece_id in self.trie.prefixes(text, pos)]
        if not out or out[0][0] != pos + 1:
            out.append((pos + 1, self.unk_id, self.unk_score, True))
        return out

    # the forward pass below inlines this walk: it is the hot loop of every encode
    def _forward(self, text: str, base: float = 0.0):
        """The Viterbi forward pass from running total ``base``: (best score, start, id) arrays
        indexed by end offset, with sentencepiece's rebase of large totals when it applies."""
        n = len(text)
        best = array("f", bytes(4 * (n + 1))) if self.float32_sums else [0.0] * (n + 1)
        best[0] = base
        start_at = [-1] * (n + 1)
        best_id = [self.unk_id] * (n + 1)
        root = self.trie.root
        scores = self.scores
        unk_score = self.unk_score
        unk_id = self.unk_id
        float32 = self.float32_sums
        limit = self.rebase_limit
        reach = 0  # the furthest offset any offer has reached (what a rebase must shift)
        f32 = array("f", [0.0])
        for pos in range(n):
            here = best[pos]
            if limit is not None and (here < -limit or here > limit):
                for k in range(pos, reach + 1):
                    if k == pos or start_at[k] >= 0:
                        best[k] = best[k] - here
                here = 0.0
            node = root
            single = False
            j = pos
            while j < n:
                entry = node.get(text[j])
                if entry is None:
                    break
                node, piece_id = entry
                j += 1
                if piece_id >= 0:
                    candidate = scores[piece_id] + here
                    if float32:
                        f32[0] = candidate
                        candidate = f32[0]
                    if start_at[j] < 0 or candidate > best[j]:
                        best[j] = candidate
                        start_at[j] = pos
                        best_id[j] = piece_id
                    if j == pos + 1:
                        single = True
            if j > reach:
                reach = j
            if not single:
                candidate = unk_score + here
                if float32:
                    f32[0] = candidate
                    candidate = f32[0]
                j = pos + 1
                if start_at[j] < 0 or candidate > best[j]:
                    best[j] = candidate
                    start_at[j] = pos
                    best_id[j] = unk_id
                if j > reach:
                    reach = j
        return best, start_at, best_id

    def viterbi(self, text: str) -> list[tuple[int, int, int]]:
        """The best segmentation of normalised ``text``: (id, start, end) per piece, before
        unknowns are merged.

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> model.viterbi("▁ab")
            [(11, 0, 2), (66, 2, 3)]
        """
        if not text:
            return []
        _, start_at, best_id = self._forward(text)
        return backtrack(start_at, best_id, len(text))

    def encode(self, text: str) -> list[tuple[int, int, int]]:
        """Viterbi, then consecutive unknowns merged (or, with byte fallback, unknown
        characters spelled as ``<0xNN>`` pieces): (id, start, end) per token.

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> model.encode("▁a你好")
            [(11, 0, 2), (0, 2, 4)]
        """
        return self.finish(self.viterbi(text), text)

    def finish(self, segments: list[tuple[int, int, int]], text: str) -> list[tuple[int, int, int]]:
        """Merge runs of unknowns (or spell them as bytes with byte fallback)."""
        unk = self.unk_id
        out: list[tuple[int, int, int]] = []
        for token in segments:
            if token[0] != unk:
                out.append(token)
            elif self.byte_fallback and self.byte_ids:
                _, start, end = token
                for byte in text[start:end].encode("utf-8"):
                    piece_id = self.byte_ids.get(byte)
                    if piece_id is None:
                        raise LabkitError(f"UnigramModel: byte fallback has no piece <0x{byte:02X}>")
                    out.append((piece_id, start, end))
            elif out and out[-1][0] == unk:
                out[-1] = (unk, out[-1][1], token[2])
            else:
                out.append(token)
        return out

    def encode_pieces(self, text: str) -> list[str]:
        """The surface strings of :meth:`encode` (an unknown run shows as its own text, as
        sentencepiece's ``encode(out_type=str)`` does).

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> model.encode_pieces("▁Hello")
            ['▁He', 'll', 'o']
        """
        return [text[s:e] if i == self.unk_id else self.pieces[i] for i, s, e in self.encode(text)]

    # -- the lattice as data -------------------------------------------------------
    def lattice(self, text: str) -> Lattice:
        """Run the forward pass keeping every candidate piece and every offer, for tables and
        drawings (slower than :meth:`viterbi`; same answer).

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> model.lattice("▁What▁is▁LoRA?").results_table()[3]
            {'offset': 3, 'char': 'h', 'best_score': -16.6603946685791, 'last_piece': 'h', 'last_id': 60, 'starts_at': 2, 'on_best_path': False}
        """
        n = len(text)
        best = array("f", bytes(4 * (n + 1))) if self.float32_sums else [0.0] * (n + 1)
        start_at = [-1] * (n + 1)
        best_id = [self.unk_id] * (n + 1)
        nodes: list[LatticeNode] = []
        winner_node = [-1] * (n + 1)
        offers = []
        for pos in range(n):
            here = best[pos]
            for end, piece_id, score, unknown in self.candidates(text, pos):
                kind = "unknown" if unknown else (
                    "user_defined" if self.types[piece_id] == TOKEN_USER_DEFINED else "normal")
                nodes.append(LatticeNode(pos, end, piece_id, text[pos:end] if kind == "unknown" else self.pieces[piece_id], score, kind))
                candidate = to_float32(score + here) if self.float32_sums else score + here
                wins = start_at[end] < 0 or candidate > best[end]
                offers.append({"from": pos, "to": end, "piece": nodes[-1].piece, "score": score,
                               "offer": candidate, "previous_best": None if start_at[end] < 0 else best[end], "wins": wins})
                if wins:
                    best[end] = candidate
                    start_at[end] = pos
                    best_id[end] = piece_id
                    winner_node[end] = len(nodes) - 1
        path = [node for node, _, _ in backtrack(start_at, winner_node, n)]
        return Lattice(text, nodes, [float(x) for x in best], start_at, best_id, path, offers)

    # -- n-best -------------------------------------------------------------------
    def nbest(self, text: str, k: int) -> list[tuple[list[tuple[int, int, int]], float]]:
        """The ``k`` best segmentations with their total scores, best first (exact sums in
        double; a teaching tool, not a bit-exact copy of sentencepiece's A* search).

        Example:
            >>> import labkit
            >>> model = labkit.load("botchan-unigram", engine="labkit").model
            >>> [[model.pieces[i] for i, _, _ in segs] for segs, _ in model.nbest("▁hello", 3)]
            [['▁he', 'll', 'o'], ['▁he', 'l', 'l', 'o'], ['▁', 'he', 'll', 'o']]
        """
        if not isinstance(k, int) or k < 1:
            raise LabkitError(f"UnigramModel.nbest: k must be a positive int, got {k!r}")
        if not text:
            return [([], 0.0)]
        n = len(text)
        edges: list[list[tuple[int, int, float]]] = [[] for _ in range(n + 1)]  # by end offset
        for pos in range(n):
            for end, piece_id, score, _ in self.candidates(text, pos):
                edges[end].append((pos, piece_id, score))
        # top[j]: up to k best (score, path) ending at j, kept sorted best first
        top: list[list[tuple[float, tuple]]] = [[] for _ in range(n + 1)]
        top[0] = [(0.0, ())]
        for j in range(1, n + 1):
            pool = []
            for start, piece_id, score in edges[j]:
                for total, path in top[start]:
                    pool.append((total + score, path + ((piece_id, start, j),)))
            top[j] = heapq.nlargest(k, pool, key=lambda item: item[0])
        return [(list(path), total) for total, path in top[n]]
