"""llama.cpp's BPE over raw UTF-8 (``byte_encode`` off): Gemma 4, Sarvam, granite-embed-multi-311m.

Most GGUF BPE vocabularies are byte-level: every byte is spelled as one printable character
(``Ġ`` for a space) and merges run over those (:mod:`labkit.algorithms.pretokenize`). A few
split names tell llama.cpp (``src/llama-vocab.cpp``, ``llm_tokenizer_bpe``) that the tokens are
spelled as SentencePiece spells them instead: real UTF-8 text, ``▁`` for a space and
``<0xNN>`` tokens for single bytes. For those, llama.cpp

1. writes ``▁`` for every space of a stretch of ordinary text (``escape_whitespaces``; not for
   the "whitespace" split);
2. cuts it into words with one regex: lines and runs of newlines (``[^\\n]+|[\\n]+``), or, for
   "whitespace", runs of non-space and runs of space (``\\S+``, the text between matches kept);
3. merges each word's UTF-8 characters by rank (the merges list's line number; the lowest
   first, the leftmost on a tie), as for byte-level BPE; Gemma 4 first takes a word made of
   newlines whole when it is a token;
4. names each part by its spelling; a part that is no token becomes its bytes' ``<0xNN>``
   tokens, and a byte without one is dropped.

The "whitespace" tokenizer model (jina-embeddings-v2-base-zh) drops every character llama.cpp
calls whitespace first, lowercases where the file's key says, and merges each run of the rest
as one word (:class:`~labkit.engines.labkit_llama_bpe_utf8.Utf8BPE`).

Decoding (``llama_detokenize``): an ordinary token's text with ``▁`` read as a space (or, for
"whitespace", read as byte-level text), a byte token its byte, then llama.cpp's
``clean_spaces`` passes (not for Sarvam). Gemma 4's names add BOS whatever the file says.
:class:`Utf8Rules` holds these switches per name, measured against llama.cpp itself in
``tests/test_conformance_random_gguf_utf8.py``. Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.algorithms.llama_bpe_utf8 import merge_word
    >>> ranks = {("l", "o"): 0, ("lo", "w"): 1, ("▁", "low"): 2}
    >>> merge_word("▁low", ranks)
    ['▁low']
"""
from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from typing import Mapping

from labkit.algorithms.llama_wpm import is_whitespace

SPACE = "\u2581"
# the spaces of std::wregex's \s in llama.cpp: the six ASCII ones, and every non-ASCII
# character llama.cpp's own tables call whitespace (it writes those as U+000B before matching)
_ASCII_SPACES = "\t\n\v\f\r "


@dataclass(frozen=True)
class Utf8Rules:
    """What one split name switches on in llama.cpp (``llm_tokenizer_bpe`` and the vocabulary's load).

    Example:
        >>> UTF8_BPE_RULES["sarvam-moe"].clean_spaces
        False
    """

    name: str
    lines: bool                 # cut at newlines ([^\\n]+|[\\n]+); else at whitespace (\\S+)
    escape_whitespaces: bool    # " " -> "▁" before the split, "▁" -> " " when decoding
    clean_spaces: bool          # llama_detokenize's clean_spaces passes
    gemma4: bool                # add BOS always; a word of newlines that is a token is taken whole
    note: str


UTF8_BPE_RULES: dict[str, Utf8Rules] = {rule.name: rule for rule in (
    Utf8Rules("gemma4", True, True, True, True, "Gemma 4: SentencePiece-style BPE, lines merged whole"),
    Utf8Rules("granite-embed-multi-311m", True, True, True, True, "read as gemma4 (llama.cpp's GEMMA4 type)"),
    Utf8Rules("sarvam-moe", True, True, False, False, "Sarvam: as gemma4, without its two rules or clean_spaces"),
    Utf8Rules("whitespace", False, False, True, False, "jina-embeddings-v2-base-zh: runs of non-space, raw spaces"),
)}
# a GGUF whose tokenizer model is "gemma4" is read with this split whatever its pre key says
GEMMA4_MODEL_RULES = "gemma4"


def is_llama_space(ch: str) -> bool:
    """Whether llama.cpp's ``\\S`` stops at ``ch`` (std::wregex's ASCII spaces, and the
    non-ASCII characters llama.cpp's tables call whitespace).

    Example:
        >>> is_llama_space("\\u3000"), is_llama_space("\\x1c"), is_llama_space("\\u200b")
        (True, False, False)
    """
    return ch in _ASCII_SPACES or (ch > "\x7f" and is_whitespace(ord(ch)))


_LINES = re.compile(r"[^\n]+|\n+")


def split_words(text: str, rules: Utf8Rules) -> list[str]:
    """The words llama.cpp merges one at a time (``text`` already escaped where the rules say).

    Example:
        >>> split_words("a▁b\\n\\nc", UTF8_BPE_RULES["gemma4"]), split_words("ab  c", UTF8_BPE_RULES["whitespace"])
        (['a▁b', '\\n\\n', 'c'], ['ab', '  ', 'c'])
    """
    if rules.lines:
        return _LINES.findall(text)
    words: list[str] = []
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or is_llama_space(text[index]) != is_llama_space(text[start]):
            words.append(text[start:index])
            start = index
    return words


def merge_word(word: str, ranks: Mapping[tuple[str, str], int]) -> list[str]:
    """Rank BPE over the characters of one word, as llama.cpp's bigram queue runs it: the
    pair with the lowest rank first, the leftmost on a tie; a queued pair whose parts have
    changed is skipped when it surfaces. The result's parts need not be tokens.

    Example:
        >>> merge_word("aaa", {("a", "a"): 0})
        ['aa', 'a']
    """
    parts: list[str | None] = list(word)
    after = list(range(1, len(parts) + 1))  # the next live part's index (len: none)
    before = list(range(-1, len(parts) - 1))
    queue = [(ranks[pair], i, pair) for i, pair in enumerate(zip(word, word[1:])) if pair in ranks]
    heapq.heapify(queue)
    while queue:
        _, left, (a, b) = heapq.heappop(queue)
        right = after[left]
        if parts[left] != a or right >= len(parts) or parts[right] != b:
            continue  # stale: a part changed since this pair was queued
        parts[left], parts[right] = a + b, None
        after[left] = after[right]
        if after[left] < len(parts):
            before[after[left]] = left
            pair = (a + b, parts[after[left]])
            if pair in ranks:
                heapq.heappush(queue, (ranks[pair], left, pair))
        if before[left] >= 0:
            pair = (parts[before[left]], a + b)
            if pair in ranks:
                heapq.heappush(queue, (ranks[pair], before[left], pair))
    return [part for part in parts if part is not None]


def merge_ranks(merges) -> dict[tuple[str, str], int]:
    """``{(left, right): rank}`` from a merges list, the first rank kept for a repeated merge
    (llama.cpp emplaces them into a map).

    Example:
        >>> merge_ranks([("a", "b"), ("c", "d"), ("a", "b")])
        {('a', 'b'): 0, ('c', 'd'): 1}
    """
    ranks: dict[tuple[str, str], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(tuple(pair), rank)
    return ranks
