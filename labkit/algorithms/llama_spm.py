"""llama.cpp's SentencePiece-style tokenizer (``tokenizer.ggml.model = "llama"``), as its loop runs.

llama.cpp does not run sentencepiece. For a "llama" GGUF it spells every space ``▁`` and runs
one score-BPE loop over each stretch of text (``llm_tokenizer_spm_session`` in
``src/llama-vocab.cpp``), which differs from sentencepiece's in what it looks up:

* every token is a merge result, whatever its type: control, unused, user-defined and byte
  tokens too (``<s>`` is made from ``<s`` + ``>`` where both are tokens);
* the pair whose joined spelling is a token of highest score merges first, the leftmost on a
  tie (float32 scores compared as stored);
* a symbol left over is looked up among all tokens; a character no token spells becomes one
  token per UTF-8 byte, found by the spelling ``<0xNN>`` whatever its type, else by the byte
  as a one-character token; with neither, llama.cpp throws and its process ends. There is no
  ``<unk>``.

The same symbols come faster without the queue: a short text by rescanning for the best pair,
and a long one cut where no merge can cross (:meth:`LlamaSpm.cut`; only tokens two symbols
spell can be made, :func:`tokens_merges_make`), each chunk merged alone.

Decoding (``token_to_piece`` / ``llama_detokenize``) is here too: see :func:`piece_bytes`.
Read at llama.cpp commit 0c1e5709 (llama-cpp-python 0.3.36) and measured against it
(:mod:`labkit.conformance.random_gguf_spm`). Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.algorithms.llama_spm import LlamaSpm
    >>> LlamaSpm(["a", "b", "ab", "<0x63>"], [0.0, 0.0, -1.0, 0.0]).encode("abc")
    [2, 3]
"""
from __future__ import annotations

import heapq
import re
import struct
from typing import Sequence

from labkit.algorithms.spm_bpe import SHORT_TEXT_CHARS, rescan, runs_of, unjoinable_cuts
from labkit.core import LabkitError


SPACE = "\u2581"


def float32(value: float) -> float:
    """``value`` rounded to float32, as llama.cpp holds a score.

    Example:
        >>> float32(0.1) == 0.1
        False
    """
    return struct.unpack("<f", struct.pack("<f", value))[0]


class LlamaSpm:
    """llama.cpp's SPM merge loop over a GGUF's tokens and scores (see the module docstring).

    Example:
        >>> spm = LlamaSpm(["▁", "h", "i", "▁h", "hi"], [0, 0, 0, -2, -1])
        >>> [spm.tokens[i] for i in spm.encode("▁hi")]  # 'hi' outscores '▁h'
        ['▁', 'hi']
    """

    def __init__(self, tokens: Sequence[str], scores: Sequence[float] | None):
        self.tokens = list(tokens)
        self.token_to_id = {token: index for index, token in enumerate(self.tokens)}
        self.scores = [float32(s) for s in scores] if scores is not None else [0.0] * len(self.tokens)
        # byte -> its token: '<0xNN>' whatever its type, else the byte itself as a token (llama.cpp's byte_to_token)
        self.byte_ids: list[int | None] = [
            self.token_to_id.get(f"<0x{b:02X}>", self.token_to_id.get(chr(b)) if b < 0x80 else None)
            for b in range(256)]
        # every two characters side by side in a token some merge can make: only those can ever be joined
        self._joinable = frozenset(t[k:k + 2] for t in tokens_merges_make(self.tokens) for k in range(len(t) - 1))
        # a character in no such pair is never joined (llama's digits, most CJK, any character no
        # token spells): it is always its own token, or its bytes' tokens
        joined_chars = sorted(set("".join(self._joinable)))
        self._lone_class = "[^" + "".join(map(re.escape, joined_chars)) + "]" if joined_chars else "(?s:.)"
        # for the rescan of a short text: each token's place among the distinct scores, 0 the best
        # (None with a NaN score, which orders nothing: the heap then, as llama.cpp runs it)
        self._places: dict[str, int] | None = None
        if not any(score != score for score in self.scores):
            distinct = sorted(set(self.scores), reverse=True)
            place = {score: rank for rank, score in enumerate(distinct)}
            self._places = {token: place[self.scores[i]] for token, i in self.token_to_id.items() if len(token) > 1}
            self._no_place = len(distinct)  # past every place: a pair that spells no token
        # a loop that gives _merged's symbols faster on long texts, where one is known to (set by the engine)
        self.fast_merge = None

    def symbols(self, text: str) -> list[str]:
        """The symbols the merge loop leaves (each a token, or one character no merge joined).

        Example:
            >>> LlamaSpm(["a", "b", "ab"], [0, 0, -1]).symbols("abc")
            ['ab', 'c']
        """
        if len(text) < 2:  # nothing to merge
            return list(text)
        if len(text) <= SHORT_TEXT_CHARS and self._places is not None:
            return self._rescan(text)
        return (self.fast_merge or self._merged)(text)

    def encode(self, text: str) -> list[int]:
        """The ids of one stretch of text whose spaces are already ``▁``.

        Raises LabkitError where llama.cpp ends its process (a character with no token and a
        byte with no token).

        Example:
            >>> LlamaSpm(["x", "<0x79>"], [0, 0]).encode("xy")
            [0, 1]
        """
        return self.encode_ids(text)

    def encode_ids(self, text: str) -> list[int]:
        """:meth:`encode`'s ids without building spans: the symbols looked up in one pass, the
        bytes of a character no token spells only where there is one.

        Example:
            >>> LlamaSpm(["x", "<0x79>"], [0, 0]).encode_ids("xyx")
            [0, 1, 0]
        """
        symbols = self.symbols(text)
        ids = list(map(self.token_to_id.get, symbols))  # in C: one pass
        if None in ids:
            return [t for symbol, token in zip(symbols, ids)
                    for t in (self.byte_tokens(symbol) if token is None else (token,))]
        return ids

    def byte_tokens(self, character: str) -> list[int]:
        """The tokens of a character no token spells: one per UTF-8 byte (llama.cpp's byte_to_token).

        Example:
            >>> LlamaSpm(["<0xC3>", "<0xA9>"], [0, 0]).byte_tokens("é")
            [0, 1]
        """
        out = []
        for byte in character.encode("utf-8"):
            token = self.byte_ids[byte]
            if token is None:
                raise LabkitError(
                    f"llama.cpp cannot tokenize {character!r}: no token spells it, nor its byte 0x{byte:02X} "
                    f"(as '<0x{byte:02X}>' or itself); llama.cpp's tokenizer throws there and its process ends")
            out.append(token)
        return out

    def cut(self, text: str) -> list[str]:
        """``text`` in chunks that merge independently: cut between two characters that sit side
        by side in no token a merge can make. The chunks' tokens, joined, are the text's, so a
        long stretch without spaces merges in short chunks that a cache can keep.

        Example:
            >>> LlamaSpm(["a", "b", "ab", "c"], [0, 0, -1, 0]).cut("abcab")
            ['ab', 'c', 'ab']
        """
        if len(text) < 2:
            return [text]
        cuts = unjoinable_cuts(text, self._joinable)
        return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]

    def isolated_runs(self, text: str, shortest: int = 1) -> list[str]:
        """``text`` split around runs (of at least ``shortest``) of characters no merge ever
        joins (llama's digits, characters no token spells): odd items are such runs, each
        character its own symbol; even items the text between.

        Example:
            >>> spm = LlamaSpm(["a", "b", "ab", "1", "2"], [0, 0, -1, 0, 0])
            >>> spm.isolated_runs("ab12ba1"), spm.isolated_runs("ab12ba1", shortest=2)
            (['ab', '12', 'ba', '1', ''], ['ab', '12', 'ba1'])
        """
        return runs_of(self._lone_class, shortest).split(text)

    def encode_spans(self, text: str) -> list[tuple[int, int, int]]:
        """(id, start, end) per token, character offsets into ``text`` (a byte token spans its character).

        Example:
            >>> LlamaSpm(["a", "<0xC3>", "<0xA9>"], [0, 0, 0]).encode_spans("aé")
            [(0, 0, 1), (1, 1, 2), (2, 1, 2)]
        """
        out: list[tuple[int, int, int]] = []
        start = 0
        for piece in self.symbols(text):
            end = start + len(piece)
            token = self.token_to_id.get(piece)
            if token is not None:
                out.append((token, start, end))
            else:  # one character no token spells: its bytes, each spanning it
                out += [(byte_token, start, end) for byte_token in self.byte_tokens(piece)]
            start = end
        return out

    def _rescan(self, text: str) -> list[str]:
        """:meth:`_merged`'s symbols for a short text, with no queue (:func:`~labkit.algorithms.spm_bpe.rescan`)."""
        return rescan(text, self._places.get, self._no_place)

    def _merged(self, text: str) -> list[str]:
        """The symbols left when no two neighbours join into a token (llama.cpp's work queue)."""
        n = len(text)
        if n < 2:
            return [text] if text else []
        symbols = list(text)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        nxt[-1] = -1
        lookup, scores, joinable = self.token_to_id.get, self.scores, self._joinable
        heap: list[tuple[float, int, int, int]] = []

        def add_pair(left: int, right: int) -> None:
            joined = symbols[left] + symbols[right]
            token = lookup(joined)
            if token is not None:
                # highest score first, then leftmost; the length tells a stale entry (llama.cpp's check)
                heap.append((-scores[token], left, right, len(joined)))

        for i in range(n - 1):
            if text[i:i + 2] in joinable:
                add_pair(i, i + 1)
        heapq.heapify(heap)
        push, pop = heapq.heappush, heapq.heappop
        while heap:
            _, left, right, size = pop(heap)
            a, b = symbols[left], symbols[right]
            if not a or not b or len(a) + len(b) != size:
                continue
            symbols[left], symbols[right] = a + b, ""
            after = nxt[right]
            nxt[left] = after
            if after >= 0:
                prv[after] = left
            for x, y in ((prv[left], left), (left, after)):
                if x >= 0 and y >= 0:
                    joined = symbols[x] + symbols[y]
                    token = lookup(joined)
                    if token is not None:
                        push(heap, (-scores[token], x, y, len(joined)))
        return [s for s in symbols if s]


def tokens_merges_make(tokens: Sequence[str]) -> set[str]:
    """The tokens llama.cpp's loop can make: those two symbols spell, a symbol being a token it
    can make or a single character (what every symbol starts as).

    Example:
        >>> sorted(tokens_merges_make(["a", "b", "ab", "<0x41>"]))
        ['ab']
    """
    made: set[str] = set()
    for token in sorted(set(tokens), key=len):  # a token's halves are shorter: they are settled first
        if any((k == 1 or token[:k] in made) and (k == len(token) - 1 or token[k:] in made)
               for k in range(1, len(token))):
            made.add(token)
    return made


def loops_agree(tokens: Sequence[str], types: Sequence[int]) -> bool:
    """Whether sentencepiece's merge loop merges exactly as llama.cpp's on this vocabulary.

    They differ only in what a merge may make: sentencepiece joins two symbols into a normal
    (or user-defined, unused) piece, llama.cpp into any token. So they agree when there is no
    user-defined or unused token, and no other token beyond the normal ones (control, unknown,
    byte) that two symbols could join into, a symbol being a token or a single character.

    Example:
        >>> from labkit.algorithms.llama_spm import loops_agree
        >>> loops_agree(["a", "b", "ab", "<s>"], [1, 1, 1, 3]), loops_agree(["a", "b", "ab", "<s", ">", "<s>"], [1, 1, 1, 1, 1, 3])
        (True, False)
    """
    spelled = set(tokens)
    for token, kind in zip(tokens, types):
        if kind in (_USER_DEFINED, _UNUSED):
            return False
        if kind != _NORMAL and any((len(token[:k]) == 1 or token[:k] in spelled) and (len(token[k:]) == 1 or token[k:] in spelled)
                                   for k in range(1, len(token))):
            return False
    return True


# GGUF token types (sentencepiece's numbering) as llama.cpp's token_to_piece reads them
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6


def byte_of(token: str) -> int:
    """The byte a BYTE-typed token stands for, as llama.cpp reads it: ``strtol`` of its 4th and
    5th characters in base 16 (``<0x41>`` -> 0x41; a token spelled otherwise gives what strtol
    makes of those two characters, 0 if nothing).

    Example:
        >>> byte_of("<0x41>"), byte_of("<0xZZ>"), byte_of("<0x7")
        (65, 0, 7)
    """
    part = token.encode("utf-8")[3:5].lstrip(b" \t\n\v\f\r")
    sign = -1 if part[:1] == b"-" else 1
    part = part[1:] if part[:1] in (b"-", b"+") else part
    digits = b""
    for ch in part:
        if chr(ch) not in "0123456789abcdefABCDEF":
            break
        digits += bytes([ch])
    return (sign * int(digits, 16)) & 0xFF if digits else 0


def piece_bytes(token: str, kind: int, special: bool) -> bytes:
    """What llama.cpp's ``token_to_piece`` gives for one token of a "llama" (or "t5") vocabulary:
    control and unknown tokens their text only with ``special`` (else nothing), user-defined
    ones their text, normal ones their text with ``▁`` as a space, byte tokens their byte,
    anything else (unused) nothing.

    Example:
        >>> piece_bytes("▁hi", 1, False), piece_bytes("<s>", 3, False), piece_bytes("<0x0A>", 6, False)
        (b' hi', b'', b'\\n')
    """
    if kind in (_UNKNOWN, _CONTROL):
        return token.encode("utf-8") if special else b""
    if kind == _USER_DEFINED:
        return token.encode("utf-8")
    if kind == 1:
        return token.replace(SPACE, " ").encode("utf-8")
    if kind == _BYTE:
        return bytes([byte_of(token)])
    return b""


def detokenize(ids: Sequence[int], tokens: Sequence[str], kinds: Sequence[int], *, special: bool,
               strip_first_space: bool) -> str:
    """llama.cpp's ``llama_detokenize`` (remove_special off) for a "llama" vocabulary: the pieces
    joined, one leading space taken from the first token's piece when the file adds a space
    prefix (even if that piece is empty: the next keeps its space), the bytes read as UTF-8
    with each bad sequence one U+FFFD (as Python's ``errors="replace"`` reads llama.cpp's bytes).

    Example:
        >>> detokenize([0, 1], ["<s>", "▁hi"], [3, 1], special=False, strip_first_space=True)
        ' hi'
    """
    return join_pieces((piece_bytes(tokens[token], kinds[token], special) for token in ids),
                       strip_first_space).decode("utf-8", "replace")


def join_pieces(pieces, strip_first_space: bool) -> bytes:
    """``llama_detokenize``'s join of ``token_to_piece`` results, for every tokenizer model: one
    leading space taken from the first piece when the file adds a space prefix (an empty first
    piece still takes the turn, and the next keeps its space).

    Example:
        >>> join_pieces([b" a", b" b"], True), join_pieces([b"", b" b"], True)
        (b'a b', b' b')
    """
    out = bytearray()
    for position, piece in enumerate(pieces):
        if position == 0 and strip_first_space and piece[:1] == b" ":
            piece = piece[1:]
        out += piece
    return bytes(out)
