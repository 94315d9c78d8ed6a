"""Split raw text at added tokens (special and user-defined) before the model runs.

Longest match first: at each position the longest added-token spelling wins, so
``<|im_end|>`` is never cut into ``<|im_`` + ... when both spellings exist. With
``parse_special=False`` special tokens are plain text, but user-defined (non-special) added
tokens are still matched, as llama.cpp and ``tokenizers`` both do. For a GGUF
(``llama_cpp=True``) the tokens are found as llama.cpp finds them: one token at a time, the
longest spelling first, each cut out of whatever text is left (it differs from the
leftmost-longest scan only where spellings overlap in part or swallow spaces).
Introduced in notebook ``07_special_tokens_chat_templates``.

Example (the longer spelling wins; without parse_special a special token is text):
    >>> from labkit.core import AddedToken
    >>> from labkit.algorithms.specials import AddedTokenSplitter
    >>> splitter = AddedTokenSplitter([AddedToken("<|im_", 7, special=True), AddedToken("<|im_end|>", 8, special=True)])
    >>> splitter.split("a<|im_end|>", parse_special=True), splitter.split("a<|im_end|>", parse_special=False)
    ([(0, 1, None), (1, 11, 8)], [(0, 11, None)])
"""
from __future__ import annotations

from collections import Counter
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

    def __init__(self, added: Sequence[AddedToken], *, normalized_second: bool = False, llama_cpp: bool = False):
        self.by_content = {a.content: a for a in added if a.content}
        # llama.cpp (a GGUF): one token at a time, the longest spelling (in UTF-8 bytes) first,
        # cut out of every stretch of text left; a stable sort keeps ties in id order. Without
        # strips or spellings overlapping in part, the one leftmost-longest pass below finds the
        # same matches (and costs one scan, not one per token)
        tokens = list(self.by_content.values())
        needed = llama_cpp and (any(a.lstrip or a.rstrip for a in tokens)
                                or overlaps_another([a.content for a in tokens]) is not None)
        self._one_at_a_time = sorted(tokens, key=lambda a: (-len(a.content.encode("utf-8")), a.id)) if needed else None
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
        if self._one_at_a_time is not None:
            return self._split_longest_first(text, parse_special)
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

    def _split_longest_first(self, text: str, parse_special: bool) -> list[tuple[int, int, int | None]]:
        """llama.cpp's partition (``tokenizer_st_partition``): each added token in turn, longest
        first, is cut out of every stretch of text no earlier token took. Without parse_special,
        special tokens are left out entirely. lstrip/rstrip swallow ASCII whitespace (C isspace)
        next to the token, within its stretch; the swallowed spaces go with the token's span."""
        segments: list[tuple[int, int, int | None]] = [(0, len(text), None)]
        for token in self._one_at_a_time:
            if token.special and not parse_special:
                continue
            spelling, width = token.content, len(token.content)
            out: list[tuple[int, int, int | None]] = []
            changed = False
            for start, end, token_id in segments:
                if token_id is not None:
                    out.append((start, end, token_id))
                    continue
                base = start
                found = text.find(spelling, base, end)
                while found >= 0:
                    changed = True
                    left_end = found
                    if token.lstrip:
                        while left_end > base and text[left_end - 1] in _C_SPACE:
                            left_end -= 1
                    if left_end > base:
                        out.append((base, left_end, None))
                    base = found + width
                    if token.rstrip:
                        while base < end and text[base] in _C_SPACE:
                            base += 1
                    out.append((left_end, base, token.id))
                    found = text.find(spelling, base, end)
                if base < end:
                    out.append((base, end, None))
            if changed:
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


def overlapping_spellings(candidates: list[str], spellings: list[str], longest: int | None = None) -> set[str]:
    """The candidates that overlap another spelling or themselves, in time linear in the
    total length of the spellings (sets of prefixes and suffixes instead of all pairs).
    ``longest`` bounds the overlaps looked for (the candidates are no longer than it).

    Example:
        >>> from labkit.algorithms.specials import overlapping_spellings
        >>> overlapping_spellings(["ab]"], ["ab]", "]cd"])
        {'ab]'}
    """
    distinct = set(spellings)
    candidate_set = set(candidates)
    widths = sorted({len(c) for c in candidate_set})
    bad: set[str] = set()
    # containment: windows of every spelling with a candidate's width
    for spelling in distinct:
        for width in widths:
            if width > len(spelling):
                break
            for i in range(len(spelling) - width + 1):
                window = spelling[i : i + width]
                if window in candidate_set and window != spelling:
                    bad.add(window)  # a candidate inside a longer spelling
                    if spelling in candidate_set:
                        bad.add(spelling)
    # partial overlap: a proper suffix of one spelling is a proper prefix of another (or itself)
    heads, tails = set(), set()
    for spelling in distinct:
        for k in range(1, len(spelling) if longest is None else min(len(spelling), longest)):
            heads.add(spelling[:k])
            tails.add(spelling[-k:])
    for candidate in candidate_set:
        if any(candidate[-k:] in heads or candidate[:k] in tails for k in range(1, len(candidate))):
            bad.add(candidate)
    return bad


def overlaps_another(spellings: Sequence[str]) -> str | None:
    """A spelling a proper suffix of which is a proper prefix of another spelling (or the
    other way round), or None. Overlapping only itself (``"aba"``) does not count: one
    spelling's matches come out alike found leftmost first or longest first.

    Example:
        >>> from labkit.algorithms.specials import overlaps_another
        >>> overlaps_another(["aba", "acdd"]), overlaps_another(["aba", "<s>"])
        ('aba', None)
    """
    distinct = list(dict.fromkeys(spellings))  # in the given order: the answer must not depend on str hashing
    heads: Counter = Counter()
    tails: Counter = Counter()
    for spelling in distinct:
        for k in range(1, len(spelling)):
            heads[spelling[:k]] += 1
            tails[spelling[-k:]] += 1
    for spelling in distinct:
        for k in range(1, len(spelling)):
            suffix, prefix = spelling[-k:], spelling[:k]
            # counts from other spellings: this one's own prefix (suffix) of the same length left out
            if heads[suffix] - (prefix == suffix) > 0 or tails[prefix] - (prefix == suffix) > 0:
                return spelling
    return None


def longest_first_differs(added: Sequence[AddedToken]) -> str | None:
    """Why llama.cpp's partition (longest spelling first, specials left out without
    parse_special, ASCII-only strips) may split a text otherwise than ``tokenizers``'
    (leftmost longest, specials matched in place), or None when it cannot: no token strips
    spaces, no two spellings overlap in part (a suffix of one is a prefix of another), and no
    user-defined spelling lies inside a special one.

    Example:
        >>> from labkit.core import AddedToken
        >>> from labkit.algorithms.specials import longest_first_differs
        >>> longest_first_differs([AddedToken("ab", 1), AddedToken("bcd", 2)])
        "'ab' and another added token overlap in part"
    """
    for token in added:
        if token.lstrip or token.rstrip:
            return f"{token.content!r} swallows the spaces beside it"
    overlapping = overlaps_another([a.content for a in added if a.content])
    if overlapping is not None:
        return f"{overlapping!r} and another added token overlap in part"
    user = {a.content for a in added if a.content and not a.special}
    widths = sorted({len(u) for u in user})
    for token in added:
        if token.special:
            text = token.content
            for width in widths:
                for i in range(len(text) - width + 1):
                    if text[i:i + width] in user and text[i:i + width] != text:
                        return f"the user-defined {text[i:i + width]!r} lies inside the special {text!r}"
    return None


# what C's isspace() calls whitespace (llama.cpp's lstrip/rstrip test bytes with it)
_C_SPACE = frozenset(" \t\n\x0b\x0c\r")

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
