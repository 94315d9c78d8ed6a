"""Where a text may be cut so that ``encode(a + b) == encode(a) + encode(b)``: right after a
special token that is safe.

BPE is not prefix-compositional: "hello" + " world" does not tokenize like "hello world"
at an ordinary boundary. An added token that the tokenizer splits out *before* the model
runs is different: the text on each side is tokenized on its own anyway. Such a token is a
safe cut point when it is special, matched on the raw text (not normalised), does not eat
neighbouring whitespace (no lstrip/rstrip), and no other added token's spelling overlaps it.
Safety is also checked on the tokenizer itself with probe strings, because an engine's
rules (a SentencePiece dummy prefix after a special token, for instance) can differ.
Introduced in notebook ``10_cache_boundaries``.

Example:
    >>> import labkit
    >>> from labkit.cache.boundaries import SafeBoundaries
    >>> SafeBoundaries(labkit.load("qwen2")).cut_points("<|im_start|>user\\nhi<|im_end|>")
    [12, 29]
"""
from __future__ import annotations

import re
import weakref

from labkit.algorithms.specials import AddedTokenSplitter, overlapping_spellings
from labkit.core import AddedToken, Tokenizer

# text placed around a candidate token to check that the cut really is clean
_PROBES = ("", "a", " hello", "x1 ", "\n", "héllo wörld ", "  ", "12", "Hello")


def _overlaps(a: str, b: str) -> bool:
    """True if spellings a and b can overlap in a text (one contains the other, or a suffix
    of one is a prefix of the other). The pairwise definition; ``overlapping_spellings`` (labkit.algorithms.specials) is the fast one."""
    if a in b or b in a:
        return True
    return any(a.endswith(b[:k]) or b.endswith(a[:k]) for k in range(1, min(len(a), len(b))))


def _overlaps_itself(spelling: str) -> bool:
    """True if two occurrences of the spelling can overlap ("aba" in "ababa")."""
    return any(spelling.endswith(spelling[:k]) for k in range(1, len(spelling)))


# a special longer than this is never a cut point (and its overlap checks stay bounded)
MAX_CUT_SPELLING = 64


# probing costs encodes; done once per tokenizer object
_SAFE_BY_TOKENIZER: "weakref.WeakKeyDictionary[Tokenizer, list[AddedToken]]" = weakref.WeakKeyDictionary()


def safe_added_tokens(tok: Tokenizer) -> list[AddedToken]:
    """The added tokens after which a text may be cut (by their flags, then by probing)."""
    try:
        return list(_SAFE_BY_TOKENIZER[tok])
    except (KeyError, TypeError):
        pass
    safe = _find_safe_added_tokens(tok)
    try:
        _SAFE_BY_TOKENIZER[tok] = safe
    except TypeError:
        pass
    return list(safe)


def _find_safe_added_tokens(tok: Tokenizer) -> list[AddedToken]:
    added = list(getattr(getattr(tok, "vocab", None), "added_tokens", []) or [])
    candidates = [
        a for a in added
        if a.special and not a.normalized and not a.lstrip and not a.rstrip and not a.single_word
        and a.content and len(a.content) <= MAX_CUT_SPELLING
    ]
    bad = overlapping_spellings([a.content for a in candidates], [a.content for a in added if a.content], MAX_CUT_SPELLING)
    by_flags = list({a.content: a for a in candidates if a.content not in bad}.values())
    return _probe_all(tok, by_flags)


def _probe_all(tok: Tokenizer, tokens: list[AddedToken]) -> list[AddedToken]:
    """The tokens that cut cleanly, probed in batches: one encode per probe context covers a
    whole batch (linear in the number of tokens); a batch that fails is split in two."""
    if not tokens:
        return []
    if len(tokens) == 1:
        return tokens if _cuts_cleanly(tok, tokens[0]) else []
    if _batch_cuts_cleanly(tok, tokens):
        return tokens
    half = len(tokens) // 2
    return _probe_all(tok, tokens[:half]) + _probe_all(tok, tokens[half:])


def _batch_cuts_cleanly(tok: Tokenizer, tokens: list[AddedToken]) -> bool:
    """For each probe text m: m + t1 + m + t2 + ... + tn + m encodes as its pieces do. Each m
    stands on both sides of every token; the pairs of different sides are left to
    ``_cuts_cleanly``, which a token meets when its batch fails."""
    for middle in _PROBES:
        text = middle + "".join(a.content + middle for a in tokens)
        piece = tok.encode(middle).ids if middle else []
        pieces = list(piece)
        for a in tokens:
            pieces.append(a.id)
            pieces += piece
        if tok.encode(text).ids != pieces:
            return False
    return True


def _cuts_cleanly(tok: Tokenizer, token: AddedToken) -> bool:
    for left in _PROBES:
        for right in _PROBES:
            whole = tok.encode(left + token.content + right).ids
            parts = tok.encode(left).ids + [token.id] + tok.encode(right).ids
            if whole != parts:
                return False
    return True


def _trie_pattern(spellings: list[str]) -> str:
    """One regular expression for a set of spellings, as a trie of alternations (a shared
    head is matched once), so scanning a text costs about one pass whatever their number."""
    trie: dict = {}
    for spelling in spellings:
        node = trie
        for char in spelling:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict) -> str:
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if "" in node:
            branches.append("")
        if len(branches) == 1:
            return branches[0]
        return "(?:" + "|".join(branches) + ")"

    return build(trie)


def kept_cuts(ends: list[int], start: int, min_gap: int) -> list[int]:
    """The cuts among ``ends`` that are at least ``min_gap`` characters after the previous kept
    one (``start`` counts as kept). Decided from the text before each cut, so every text that
    shares a prefix cuts it the same way.

    Example:
        >>> from labkit.cache.boundaries import kept_cuts
        >>> kept_cuts([12, 40, 52, 90], 0, 16)
        [40, 90]
    """
    kept, last = [], start
    for end in ends:
        if end - last >= min_gap:
            kept.append(end)
            last = end
    return kept


# up to this many safe spellings, cut points are found with str.find, one scan per spelling
_FIND_AT_MOST = 8


class SafeBoundaries:
    """Finds the cut points (char offsets right after a safe special token) in a text.

    Example:
        >>> from labkit.cache.boundaries import SafeBoundaries
        >>> import labkit
        >>> SafeBoundaries(labkit.load("qwen2")).cut_points("<|im_start|>x")
        [12]
    """

    def __init__(self, tok: Tokenizer):
        self.tokens = safe_added_tokens(tok)
        self.ids = frozenset(a.id for a in self.tokens)
        self._spellings = sorted({a.content for a in self.tokens})
        # safe spellings neither overlap nor contain each other: every match is a cut
        self._pattern = re.compile(_trie_pattern(self._spellings)) if self._spellings else None
        self._added = list(getattr(getattr(tok, "vocab", None), "added_tokens", []) or [])
        self._splitter = None

    def cut_points(self, text: str, parse_special: bool = True) -> list[int]:
        """Offsets just after each safe special token in ``text`` (none when specials are text).

        A safe spelling overlaps no other added token's spelling nor itself, so each of its
        occurrences is a match the added-token splitter would make too: one scan with a
        trie-shaped pattern finds them (``cut_points_by_splitting`` is the slow reference).
        """
        return self.ends_from(text, 0) if parse_special else []

    def ends_from(self, text: str, start: int) -> list[int]:
        """Offsets just after each safe special token in ``text[start:]``, where ``start`` is 0
        or itself such an offset (a spelling never straddles it: safe spellings do not overlap)."""
        if self._pattern is None:
            return []
        if len(self._spellings) > _FIND_AT_MOST:
            return [match.end() for match in self._pattern.finditer(text, start)]
        ends = []  # a few spellings: str.find scans faster than the pattern
        for spelling in self._spellings:
            width = len(spelling)
            found = text.find(spelling, start)
            while found != -1:
                ends.append(found + width)
                found = text.find(spelling, found + width)
        ends.sort()
        return ends

    def next_cut(self, text: str, start: int, min_gap: int) -> int | None:
        """The first offset just after a safe special token at least ``min_gap`` characters
        after ``start`` (0 or such an offset), or None."""
        search, position = self._pattern.search if self._pattern is not None else None, start
        while search is not None:
            match = search(text, position)
            if match is None:
                return None
            position = match.end()
            if position - start >= min_gap:
                return position
        return None

    def cut_points_by_splitting(self, text: str, parse_special: bool = True) -> list[int]:
        """The same cut points, found by running the full added-token splitter."""
        if not parse_special or not self.ids:
            return []
        if self._splitter is None:  # split with every added token: an unsafe one is never a cut
            self._splitter = AddedTokenSplitter(self._added)
        return [end for _, end, token_id in self._splitter.split(text, True) if token_id in self.ids]
