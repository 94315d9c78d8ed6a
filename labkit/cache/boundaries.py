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

Example: ``SafeBoundaries(tok).cut_points("<|im_start|>user\\nhi<|im_end|>")`` -> ``[12, 30]``
"""
from __future__ import annotations

import weakref

from labkit.algorithms.specials import AddedTokenSplitter
from labkit.core import AddedToken, Tokenizer

# text placed around a candidate token to check that the cut really is clean
_PROBES = ("", "a", " hello", "x1 ", "\n", "héllo wörld ", "  ", "12", "Hello")


def _overlaps(a: str, b: str) -> bool:
    """True if spellings a and b can overlap in a text (one contains the other, or a suffix
    of one is a prefix of the other)."""
    if a in b or b in a:
        return True
    return any(a.endswith(b[:k]) or b.endswith(a[:k]) for k in range(1, min(len(a), len(b))))


def _overlaps_itself(spelling: str) -> bool:
    """True if two occurrences of the spelling can overlap ("aba" in "ababa")."""
    return any(spelling.endswith(spelling[:k]) for k in range(1, len(spelling)))


# probing costs a few hundred encodes; done once per tokenizer object
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
        if a.special and not a.normalized and not a.lstrip and not a.rstrip and not a.single_word and a.content
    ]
    spellings = [a.content for a in added]
    by_flags = [
        a for a in candidates
        if not any(other != a.content and _overlaps(a.content, other) for other in spellings)
        and not _overlaps_itself(a.content)
    ]
    return [a for a in by_flags if _cuts_cleanly(tok, a)]


def _cuts_cleanly(tok: Tokenizer, token: AddedToken) -> bool:
    for left in _PROBES:
        for right in _PROBES:
            whole = tok.encode(left + token.content + right).ids
            parts = tok.encode(left).ids + [token.id] + tok.encode(right).ids
            if whole != parts:
                return False
    return True


class SafeBoundaries:
    """Finds the cut points (char offsets right after a safe special token) in a text.

    Example: ``SafeBoundaries(labkit.load("qwen2")).cut_points("<|im_start|>x")`` -> ``[12]``
    """

    def __init__(self, tok: Tokenizer):
        self.tokens = safe_added_tokens(tok)
        self.ids = frozenset(a.id for a in self.tokens)
        self._spellings = sorted({a.content for a in self.tokens})
        # split with every added token so an unsafe one is never mistaken for a safe one
        all_added = list(getattr(getattr(tok, "vocab", None), "added_tokens", []) or [])
        self._splitter = AddedTokenSplitter(all_added)

    def cut_points(self, text: str, parse_special: bool = True) -> list[int]:
        """Offsets just after each safe special token in ``text`` (none when specials are text).

        A safe spelling overlaps no other added token's spelling nor itself, so each of its
        occurrences is a match the added-token splitter would make too: ``str.find`` finds
        them at C speed (``cut_points_by_splitting`` is the slow reference).
        """
        if not parse_special or not self.ids:
            return []
        ends = []
        for spelling in self._spellings:
            width = len(spelling)
            start = text.find(spelling)
            while start != -1:
                ends.append(start + width)
                start = text.find(spelling, start + width)
        ends.sort()
        return ends

    def cut_points_by_splitting(self, text: str, parse_special: bool = True) -> list[int]:
        """The same cut points, found by running the full added-token splitter."""
        if not parse_special or not self.ids:
            return []
        return [end for _, end, token_id in self._splitter.split(text, True) if token_id in self.ids]
