"""PLaMo-2's tokenizer as llama.cpp runs it: the cheapest cut into scored tokens, bytes for the rest.

A PLaMo-2 vocabulary is tokens with scores, like a Unigram model, and 256 ``<0xNN>`` byte
tokens. llama.cpp (``src/llama-vocab.cpp``, ``llm_tokenizer_plamo2``) turns each score into an
integer, ``round(score * 10**4)``, and runs one dynamic-programming pass from the end of the
text: the cost of a position is the cheapest of (minus a token's integer score, plus the cost
after it) over every token the text starts with there, and of 10**7 plus the cost after one
character spelled by its UTF-8 byte tokens. On equal costs the longest token wins, and the
byte fallback only wins when strictly cheaper. Two more rules: a first code point U+FEFF of a
stretch of text is dropped, and byte tokens never take part in the cut.

llama.cpp finds the tokens that start at a position with a table of suffixes (its own
Aho-Corasick-like automaton); here a set of the tokens' prefixes gives the same candidates,
and the scan at a position stops as soon as the text leaves them. A token whose integer score is exactly the unknown cost -10**7 stops
llama.cpp's scan of shorter candidates and of the automaton, which this module does not follow:
:func:`plamo2_refusal` refuses such a vocabulary, as it does scores that overflow 32 bits.

Introduced in notebook ``05_unigram_trie_viterbi``.

Example:
    >>> from labkit.algorithms.plamo2 import Plamo2Model
    >>> model = Plamo2Model({"a": (1, -1.0), "b": (2, -1.0), "ab": (3, -1.5)}, [100 + b for b in range(256)])
    >>> model.pieces("abc")
    [(3, 0, 2), (199, 2, 3)]
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

UNKNOWN_SCORE = -10_000_000
INVALID_SCORE = -20_000_000
_INT32 = 1 << 31


def integer_score(score: float) -> int:
    """llama.cpp's table score: ``round(score * 1e4)`` (halves away from zero), INVALID for a
    score that is not finite.

    Example:
        >>> integer_score(-1.23456), integer_score(0.00005), integer_score(float("nan"))
        (-12346, 1, -20000000)
    """
    if not math.isfinite(score):
        return INVALID_SCORE
    scaled = score * 1e4
    return int(math.floor(scaled + 0.5)) if scaled >= 0 else -int(math.floor(-scaled + 0.5))


def plamo2_refusal(scores: Mapping[str, float]) -> str | None:
    """Why labkit would not cut as llama.cpp does with these token scores, or None.

    Example:
        >>> plamo2_refusal({"a": -1000.0}) is not None, plamo2_refusal({"a": -1.0})
        (True, None)
    """
    for spelling, score in scores.items():
        value = integer_score(score)
        if value == UNKNOWN_SCORE:
            return f"the token {spelling!r} scores exactly llama.cpp's unknown cost ({score}), which stops its scan"
        if value != INVALID_SCORE and not -_INT32 <= value < _INT32:
            return f"the token {spelling!r} has a score ({score}) beyond llama.cpp's 32-bit table"
    return None


class Plamo2Model:
    """The cut llama.cpp's PLaMo-2 tokenizer makes.

    ``tokens``: spelling -> (id, score) of every token that is not a byte token; ``byte_ids``:
    the id of each byte's ``<0xNN>`` token.

    Example:
        >>> Plamo2Model({"é": (1, -2.0)}, list(range(10, 266))).pieces("\\ufeffé")
        [(1, 1, 2)]
    """

    def __init__(self, tokens: Mapping[str, tuple[int, float]], byte_ids: Sequence[int]):
        self.cost = {spelling: (token, integer_score(score)) for spelling, (token, score) in tokens.items()
                     if integer_score(score) > INVALID_SCORE}
        self.byte_ids = list(byte_ids)
        # every prefix of a token: the scan at a position stops where the text leaves them
        self.prefixes = {spelling[:k] for spelling in self.cost for k in range(1, len(spelling) + 1)}

    def pieces(self, text: str) -> list[tuple[int, int, int]]:
        """(id, start, end) characters of ``text``; a character no token covers gives one id per
        UTF-8 byte, each spanning that character."""
        start = 1 if text[:1] == "\ufeff" else 0  # llama.cpp drops a leading byte order mark
        n = len(text)
        best = [0] * (n + 1)  # the cost from each position to the end
        step: list[tuple[int, int]] = [(0, 0)] * (n + 1)  # (length, id or -1) chosen at each position
        cost, prefixes = self.cost, self.prefixes
        for i in range(n - 1, start - 1, -1):
            lowest, choice = 1 << 60, (1, -1)
            end = i + 1
            while end <= n and text[i:end] in prefixes:  # the tokens the text starts with here, shortest first
                found = cost.get(text[i:end])
                if found is not None and best[end] - found[1] <= lowest:  # <=: of equal costs the longest wins
                    lowest, choice = best[end] - found[1], (end - i, found[0])
                end += 1
            if best[i + 1] - UNKNOWN_SCORE < lowest:  # the byte fallback, only when strictly cheaper
                lowest, choice = best[i + 1] - UNKNOWN_SCORE, (1, -1)
            best[i], step[i] = lowest, choice
        out: list[tuple[int, int, int]] = []
        i = start
        while i < n:
            length, token = step[i]
            if token >= 0:
                out.append((token, i, i + length))
            else:
                out.extend((self.byte_ids[b], i, i + 1) for b in text[i].encode("utf-8"))
            i += length
        return out
