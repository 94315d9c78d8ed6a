"""Split raw text at added tokens (special and user-defined) before the model runs.

Longest match first: at each position the longest added-token spelling wins, so
``<|im_end|>`` is never cut into ``<|im_`` + ... when both spellings exist. With
``parse_special=False`` special tokens are plain text, but user-defined (non-special) added
tokens are still matched, as llama.cpp and ``tokenizers`` both do.
Introduced in notebook ``07_special_tokens_chat_templates``.

Example (the longer spelling wins; without parse_special a special token is text):
    >>> from labkit.core import AddedToken
    >>> from labkit.algorithms.specials import AddedTokenSplitter
    >>> splitter = AddedTokenSplitter([AddedToken("<|im_", 7, special=True), AddedToken("<|im_end|>", 8, special=True)])
    >>> splitter.split("a<|im_end|>", parse_special=True), splitter.split("a<|im_end|>", parse_special=False)
    ([(0, 1, None), (1, 11, 8)], [(0, 11, None)])
"""
from __future__ import annotations

from typing import Sequence

import regex

from labkit.algorithms.bert_basic import is_whitespace
from labkit.core import AddedToken


class AddedTokenSplitter:
    """Finds added tokens in text; build once per tokenizer and reuse.

    Example:
        >>> import labkit
        >>> from labkit.algorithms.specials import AddedTokenSplitter
        >>> vocab = labkit.load("gpt2").vocab
        >>> AddedTokenSplitter(vocab.added_tokens).split("a<|endoftext|>b", parse_special=True)
        [(0, 1, None), (1, 14, 50256), (14, 15, None)]
    """

    def __init__(self, added: Sequence[AddedToken], *, normalized_second: bool = False):
        self.by_content = {a.content: a for a in added if a.content}
        # tokenizers (normalized_second): the tokens matched on the raw text first, then the
        # normalized ones in the stretches left between them; otherwise one pass for all
        groups = ([a for a in self.by_content.values() if not a.normalized],
                  [a for a in self.by_content.values() if a.normalized]) if normalized_second else (list(self.by_content.values()),)
        # without parse_special, tokenizers (encode_special_tokens) still matches a special
        # token and then skips it as text: a token overlapping it is not found there. Elsewhere
        # the specials are left out of the search.
        self._skip_specials_in_place = normalized_second
        self._passes = {}
        for parse_special in (True, False):
            patterns = []
            for group in groups:
                keep_specials = parse_special or self._skip_specials_in_place
                spellings = [a.content for a in group if keep_specials or not a.special]
                if spellings:
                    patterns.append(regex.compile(trie_pattern(spellings)))
            self._passes[parse_special] = patterns

    def split(self, text: str, parse_special: bool = True) -> list[tuple[int, int, int | None]]:
        """Segments (start, end, id) covering ``text``; id is None for ordinary text.

        lstrip/rstrip added tokens absorb neighbouring whitespace (HF semantics);
        single_word ones only match when not inside a word.
        """
        if not text:
            return []
        segments: list[tuple[int, int, int | None]] = [(0, len(text), None)]
        for pattern in self._passes[parse_special]:
            out: list[tuple[int, int, int | None]] = []
            for start, end, token_id in segments:
                if token_id is not None:
                    out.append((start, end, token_id))
                else:  # a stretch no earlier pass matched: searched as a text of its own
                    found = self._split_one(text[start:end], pattern, skip_specials=not parse_special)
                    out.extend((start + s, start + e, i) for s, e, i in found)
            segments = out
        return segments

    def _split_one(self, text: str, pattern, skip_specials: bool = False) -> list[tuple[int, int, int | None]]:
        """One pass of tokenizers' find_matches over ``text`` (``skip_specials``: a special
        token's match is left as text)."""
        segments: list[tuple[int, int, int | None]] = []
        cursor = 0
        pos = 0
        while True:
            match = pattern.search(text, pos)
            if match is None:
                break
            start, end = match.span()
            pos = end  # tokenizers' automaton goes on after the match, kept or not, stripped or not
            token = self.by_content[match.group()]
            if skip_specials and token.special:
                continue
            if token.single_word and (
                (start > 0 and _is_word_char(text[start - 1])) or (end < len(text) and _is_word_char(text[end]))
            ):
                continue
            if token.lstrip:  # whitespace as tokenizers tests it (White_Space, not str.isspace)
                while start > 0 and is_whitespace(text[start - 1]):
                    start -= 1
                start = max(start, cursor)  # not into what the previous match took
            if token.rstrip:
                # the spaces are absorbed, but a next match may start inside them (its segment
                # then overlaps this one, as tokenizers' find_matches gives it)
                while end < len(text) and is_whitespace(text[end]):
                    end += 1
            if start > cursor:
                segments.append((cursor, start, None))
            if end > start:  # tokenizers drops an empty piece, token or not
                segments.append((start, end, token.id))
            cursor = end
        if cursor < len(text):
            segments.append((cursor, len(text), None))
        return segments


# deeper trie patterns (10,000 nested spellings "a", "aa", ...) would overflow the regex parser
MAX_TRIE_NESTING = 100


def trie_pattern(spellings: Sequence[str]) -> str:
    """A regex matching the longest of ``spellings`` at a position, shaped as their trie.

    A flat ``a|b|c`` alternation tries every spelling at every position (2,000 specials:
    0.5 s per 180 kB); the trie tries one branch per character. Greedy ``(?:...)?`` after a
    spelling's end tries the longer spellings first, so the match is the longest. A trie
    nested deeper than ``MAX_TRIE_NESTING`` groups falls back to the flat alternation,
    longest first (the same matches).

    Example:
        >>> from labkit.algorithms.specials import trie_pattern
        >>> trie_pattern(["<a>", "<ab>", "<b>"])
        '<(?:a(?:>|b>)|b>)'
        >>> trie_pattern(["ab", "abc"])
        'ab(?:c)?'
        >>> import regex; regex.match(trie_pattern(["ab", "abc"]), "abcd").group()
        'abc'
    """
    trie: dict = {}
    for spelling in spellings:
        node = trie
        for ch in spelling:
            node = node.setdefault(ch, {})
        node[""] = {}  # end of a spelling
    if _nesting(trie) > MAX_TRIE_NESTING:
        ordered = sorted(set(spellings), key=lambda s: (-len(s), s))
        return "|".join(regex.escape(s) for s in ordered)
    return _node_pattern(trie)


def _node_pattern(node: dict) -> str:
    """The pattern below one trie node; a chain of single children is one literal run."""
    branches = []
    for ch, child in node.items():
        if not ch:
            continue
        literal = [ch]
        while len(child) == 1 and "" not in child:  # one way on, no spelling ends: no group
            (ch, child), = child.items()
            literal.append(ch)
        branches.append(regex.escape("".join(literal)) + _node_pattern(child))
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return "(?:" + body + ")?" if "" in node else body


def _nesting(trie: dict) -> int:
    """How deep the groups of ``_node_pattern`` nest (an explicit stack: tries can be deep)."""
    deepest, stack = 0, [(trie, 0)]
    while stack:
        node, depth = stack.pop()
        opens = len(node) > 1  # a choice, or a spelling that ends where a longer one goes on
        deepest = max(deepest, depth + opens)
        stack.extend((child, depth + opens) for ch, child in node.items() if ch)
    return deepest


# a word character as tokenizers tests single_word: Rust regex's Unicode \w (str.isalnum differs:
# '\u00b2' and other No numbers are alphanumeric to Python, not word characters there)
_WORD_CHAR = regex.compile(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]")


def _is_word_char(ch: str) -> bool:
    return _WORD_CHAR.match(ch) is not None
