"""``tokenizers``' normalisers with offset alignment, in pure Python.

A :class:`Piece` is normalised text with, for every character, the span of the original
text it stands for. Every normaliser is written as a list of (character, change) pairs
handed to :func:`transform`, which is how ``tokenizers`` keeps its alignments: change 0
replaces the next input character, change +1 inserts a character (it shares the previous
character's span), change -n also removes the n input characters that follow.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.algorithms.hf_normalize import normalize, Piece
    >>> normalize(Piece.of("Ｈｉ"), [{"type": "NFKC"}]).text
    'Hi'
"""
from __future__ import annotations

import unicodedata
import warnings
from dataclasses import dataclass
from itertools import repeat

import regex

from labkit.algorithms.bert_basic import is_chinese_char, is_control, is_nonspacing_mark, is_whitespace, lower_char
from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.algorithms.pretokenize import REFERENCE_STARTERS
from labkit.core import LabkitError

Span = tuple[int, int]


@dataclass
class Piece:
    """Normalised text, the original span of each character, and where it starts originally.

    Example:
        >>> from labkit.algorithms.hf_normalize import Piece
        >>> Piece.of("ab", start=3).align
        [(3, 4), (4, 5)]
    """

    text: str
    align: list[Span]
    origin: int  # original offset of the piece's start (what an insertion at 0 aligns to)

    @classmethod
    def of(cls, text: str, start: int = 0) -> "Piece":
        return cls(text, [(start + i, start + i + 1) for i in range(len(text))], start)

    def slice(self, start: int, end: int) -> "Piece":
        """The characters [start, end) as a piece of their own."""
        align = self.align[start:end]
        return Piece(self.text[start:end], align, align[0][0] if align else self.origin)

    def span(self, start: int, end: int) -> Span:
        """Original offsets of normalised characters [start, end)."""
        if start >= end:
            return self.align[start] if start < len(self.align) else (self.origin, self.origin)
        return self.align[start][0], self.align[end - 1][1]


def transform(piece: Piece, changes: list[tuple[str, int]], initial_offset: int = 0) -> Piece:
    """Apply (char, change) pairs to a piece, keeping alignments as ``tokenizers`` does.

    Example:
        >>> from labkit.algorithms.hf_normalize import transform, Piece
        >>> transform(Piece.of("ab"), [("A", 0), ("x", 1), ("b", 0)]).align
        [(0, 1), (0, 1), (1, 2)]
    """
    old = piece.align
    offset = initial_offset
    text: list[str] = []
    align: list[Span] = []
    for char, change in changes:
        if change > 0:
            span = old[min(offset, len(old)) - 1] if offset >= 1 and old else (piece.origin, piece.origin)
        else:
            # past the end only when changes removed more than they declared: the last span
            span = old[offset] if offset < len(old) else (old[-1] if old else (piece.origin, piece.origin))
            offset += 1 - change  # the replaced char and the removed ones
        text.append(char)
        align.append(span)
    return Piece("".join(text), align, piece.origin)


def _filter(piece: Piece, keep) -> Piece:
    kept = [(c, a) for c, a in zip(piece.text, piece.align) if keep(c)]
    return Piece("".join(c for c, _ in kept), [a for _, a in kept], piece.origin)


def _map_chars(piece: Piece, func) -> Piece:
    """Each char -> one or more chars (the extra ones are insertions)."""
    changes = []
    for char in piece.text:
        out = func(char)
        changes.extend((c, 1 if i else 0) for i, c in enumerate(out))
    return transform(piece, changes)


# ----------------------------------------------------------------------------- Unicode forms


# Code points Python's tables (Unicode 14) decompose and tokenizers' do not: tokenizers' NFD,
# NFKD, NFC and NFKC leave each of them as it is (measured on every code point against
# tokenizers 0.23; tests/test_hf_normalize_tables.py checks it). All but U+11938 have only a
# compatibility decomposition.
REFERENCE_UNDECOMPOSED_RANGES = (
    (0x32FF, 0x32FF), (0xA7F2, 0xA7F4), (0xAB69, 0xAB69), (0x10781, 0x10785), (0x10787, 0x107B0),
    (0x107B2, 0x107BA), (0x11938, 0x11938), (0x1F16C, 0x1F16C), (0x1FBF0, 0x1FBF9),
)
REFERENCE_UNDECOMPOSED = frozenset(cp for a, b in REFERENCE_UNDECOMPOSED_RANGES for cp in range(a, b + 1))


def _decomposition(char: str, compat: bool) -> str:
    """The char's full decomposition as tokenizers' tables give it."""
    if ord(char) in REFERENCE_UNDECOMPOSED:
        return char
    return unicodedata.normalize("NFKD" if compat else "NFD", char)


def _combining(char: str) -> int:
    """The combining class in tokenizers' tables: the 98 marks newer than them are starters there."""
    return 0 if ord(char) in REFERENCE_STARTERS else unicodedata.combining(char)


def _canonical_order(items: list[tuple[str, int]]) -> None:
    """Sort each run of combining characters by combining class, stably (in place)."""
    i = 0
    while i < len(items):
        if _combining(items[i][0]) == 0:
            i += 1
            continue
        j = i
        while j < len(items) and _combining(items[j][0]) != 0:
            j += 1
        items[i:j] = sorted(items[i:j], key=lambda item: _combining(item[0]))
        i = j


def _compose(items: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Canonical composition; a composed char carries the changes of what it absorbed (-1 each)."""
    out: list[list] = []
    starter = None  # index in out of the last starter
    last_class = -1
    for char, change in items:
        cls = _combining(char)
        if starter is not None and (last_class < cls or (last_class == 0 and cls == 0 and len(out) - 1 == starter)):
            pair = out[starter][0] + char
            composed = unicodedata.normalize("NFC", pair)
            if len(composed) == 1 and unicodedata.normalize("NFD", composed) == unicodedata.normalize("NFD", pair) \
                    and not _excluded(composed):
                out[starter][0] = composed
                out[starter][1] += change - 1
                continue
        if cls == 0:
            starter = len(out)
            last_class = 0
        else:
            last_class = cls
        out.append([char, change])
    return [(c, ch) for c, ch in out]


def _excluded(char: str) -> bool:
    """Composition exclusions never come out of NFC (NFC of their decomposition differs)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", char)) != char


def unicode_form(piece: Piece, form: str) -> Piece:
    """NFC/NFD/NFKC/NFKD with per-character changes (decompose, reorder, recompose).

    Example:
        >>> from labkit.algorithms.hf_normalize import unicode_form, Piece
        >>> unicode_form(Piece.of("e\\u0301"), "NFC").align
        [(0, 1)]
    """
    if unicodedata.is_normalized(form, piece.text):
        return piece  # (tokenizers' tables leave such text alone too: they are older, never newer)
    compat = form in ("NFKC", "NFKD")
    items: list[tuple[str, int]] = []
    for char in piece.text:
        parts = _decomposition(char, compat)
        items.extend((c, 1 if i else 0) for i, c in enumerate(parts))
    _canonical_order(items)
    if form in ("NFC", "NFKC"):
        items = _compose(items)
    return transform(piece, items)


# ----------------------------------------------------------------------------- the others




# Marks (Mn, Mc, Me) in Python's tables (Unicode 14) that tokenizers' StripAccents keeps: its
# tables are older. It also strips U+1CF2 and U+1CF3, letters (Lo) since Unicode 12.1. Measured on
# every code point against tokenizers 0.23 (tests/test_hf_normalize_tables.py).
REFERENCE_NOT_MARK_RANGES = (
    (0x07FD, 0x07FD), (0x0898, 0x089F), (0x08CA, 0x08D3), (0x09FE, 0x09FE), (0x0AFA, 0x0AFF),
    (0x0B55, 0x0B55), (0x0C04, 0x0C04), (0x0C3C, 0x0C3C), (0x0D00, 0x0D00), (0x0D3B, 0x0D3C),
    (0x0D81, 0x0D81), (0x0EBA, 0x0EBA), (0x1715, 0x1715), (0x180F, 0x180F), (0x1ABF, 0x1ACE),
    (0x1CF7, 0x1CF7), (0x1DF6, 0x1DFA), (0xA82C, 0xA82C), (0xA8FF, 0xA8FF), (0x10D24, 0x10D27),
    (0x10EAB, 0x10EAC), (0x10F46, 0x10F50), (0x10F82, 0x10F85), (0x11070, 0x11070), (0x11073, 0x11074),
    (0x110C2, 0x110C2), (0x11145, 0x11146), (0x111C9, 0x111C9), (0x111CE, 0x111CF), (0x1133B, 0x1133B),
    (0x1145E, 0x1145E), (0x1182C, 0x1183A), (0x11930, 0x11935), (0x11937, 0x11938), (0x1193B, 0x1193E),
    (0x11940, 0x11940), (0x11942, 0x11943), (0x119D1, 0x119D7), (0x119DA, 0x119E0), (0x119E4, 0x119E4),
    (0x11A01, 0x11A0A), (0x11A33, 0x11A39), (0x11A3B, 0x11A3E), (0x11A47, 0x11A47), (0x11A51, 0x11A5B),
    (0x11A8A, 0x11A99), (0x11D31, 0x11D36), (0x11D3A, 0x11D3A), (0x11D3C, 0x11D3D), (0x11D3F, 0x11D45),
    (0x11D47, 0x11D47), (0x11D8A, 0x11D8E), (0x11D90, 0x11D91), (0x11D93, 0x11D97), (0x11EF3, 0x11EF6),
    (0x16F4F, 0x16F4F), (0x16F7F, 0x16F87), (0x16FE4, 0x16FE4), (0x16FF0, 0x16FF1), (0x1CF00, 0x1CF2D),
    (0x1CF30, 0x1CF46), (0x1E130, 0x1E136), (0x1E2AE, 0x1E2AE), (0x1E2EC, 0x1E2EF),
)
_NOT_MARKS = frozenset(cp for a, b in REFERENCE_NOT_MARK_RANGES for cp in range(a, b + 1))
_EXTRA_MARKS = frozenset((0x1CF2, 0x1CF3))


def _is_mark(char: str) -> bool:
    """A mark StripAccents drops, as tokenizers' tables have it.

    Example (the acute accent is; a Unicode 14 Arabic mark tokenizers does not know is not):
        >>> _is_mark("\u0301"), _is_mark("\u0898")
        (True, False)
    """
    cp = ord(char)
    if cp in _EXTRA_MARKS:
        return True
    return unicodedata.category(char) in ("Mn", "Mc", "Me") and cp not in _NOT_MARKS


def bert(piece: Piece, node: dict) -> Piece:
    """BertNormalizer: clean text, pad CJK with spaces, strip accents, lowercase."""
    # the character tables of labkit's BERT engine (bert_basic), which are tokenizers' own
    lowercase = node.get("lowercase", True)
    if node.get("clean_text", True):
        piece = _filter(piece, lambda c: not (c in "\x00\ufffd" or (c not in "\t\n\r" and is_control(c))))
        piece = Piece("".join(" " if (c in "\t\n\r" or is_whitespace(c)) else c for c in piece.text), piece.align, piece.origin)
    if node.get("handle_chinese_chars", True):
        changes = []
        for char in piece.text:
            changes.extend([(" ", 0), (char, 1), (" ", 1)] if is_chinese_char(char) else [(char, 0)])
        piece = transform(piece, changes)
    strip = node.get("strip_accents")
    if strip if strip is not None else lowercase:
        # BERT strips nonspacing marks only (Mn); the StripAccents normaliser strips every mark
        piece = _filter(unicode_form(piece, "NFD"), lambda c: not is_nonspacing_mark(c))
    if lowercase:
        piece = _map_chars(piece, lower_char)
    return piece


def _strip(piece: Piece, node: dict) -> Piece:
    text = piece.text
    start, end = 0, len(text)
    if node.get("strip_left", False):
        while start < end and is_whitespace(text[start]):
            start += 1
    if node.get("strip_right", False):
        while end > start and is_whitespace(text[end - 1]):
            end -= 1
    return Piece(text[start:end], piece.align[start:end], piece.origin)


def pattern_matches(pattern: dict, text: str) -> list[tuple[int, int]]:
    r"""Spans of a tokenizers ``{"String": s}`` / ``{"Regex": r}`` pattern in ``text``, as
    tokenizers finds them with Oniguruma: ``^`` and ``$`` match at every line, an empty match
    right where the previous match ended is skipped (the search moves on one character), an
    empty text has no match, and a String pattern is its escaped regex (so "" matches empty
    at every position).

    Example:
        >>> from labkit.algorithms.hf_normalize import pattern_matches
        >>> pattern_matches({"String": "a"}, "banana")
        [(1, 2), (3, 4), (5, 6)]
        >>> pattern_matches({"Regex": r"\s*"}, "a b"), pattern_matches({"Regex": "^x"}, "x\nx")
        ([(0, 0), (1, 2), (3, 3)], [(0, 1), (2, 3)])
    """
    if not text:
        return []
    if "String" in pattern and pattern["String"]:
        needle = pattern["String"]  # a literal has no empty match: str.find is the same search, faster
        out, pos = [], text.find(needle)
        while pos >= 0:
            out.append((pos, pos + len(needle)))
            pos = text.find(needle, pos + len(needle))
        return out
    source = regex.escape(pattern["String"]) if "String" in pattern else pattern["Regex"]
    if source == DIGIT_GROUPS_AT_BOUNDARY:
        return digit_groups_at_boundary(text)
    search = _compiled(source).search
    out = []
    pos, last_end = 0, None
    while pos <= len(text):
        match = search(text, pos)
        if match is None:
            break
        start, end = match.span()
        if start == end and end == last_end:  # Oniguruma's iterator: no empty match touching the last one
            pos += 1
            continue
        out.append((start, end))
        pos = last_end = end
    return out


# escapes whose meaning differs between Oniguruma (tokenizers) and `regex` (labkit), measured:
# \h, \H (onig: hex digits), \z, \Z, \X, \R, \K, \G, \N, \O, \k, \g (absent or other meanings)
_UNSUPPORTED_ESCAPES = frozenset("hHzZXRKGNOkgy")
# Oniguruma's word characters (\w, \W, \b, \B) are `regex`'s but for these, measured on every
# code point against tokenizers 0.23 (tests/test_onig_word.py): the Latin-1 numbers ² ³ ¹ ¼ ½ ¾
# are word characters there (outside a class only), the joiners U+200C and U+200D are not
_ONIG_WORD_EXTRA = r"\u00b2\u00b3\u00b9\u00bc-\u00be"
_JOINERS = r"\u200c\u200d"
_ONIG_WORD = rf"(?:(?![{_JOINERS}])[\w{_ONIG_WORD_EXTRA}])"
_ONIG_NOT_WORD = rf"(?:[{_JOINERS}]|[^\w{_ONIG_WORD_EXTRA}])"
_ONIG_WORD_ESCAPES = {
    "w": _ONIG_WORD,
    "W": _ONIG_NOT_WORD,
    "b": rf"(?:(?<={_ONIG_WORD})(?!{_ONIG_WORD})|(?<!{_ONIG_WORD})(?={_ONIG_WORD}))",
    "B": rf"(?:(?<={_ONIG_WORD})(?={_ONIG_WORD})|(?<!{_ONIG_WORD})(?!{_ONIG_WORD}))",
}


# Tiny Aya's (Cohere's) digit split: quadratic in a run of digits for a backtracking engine
# (tokenizers' and `regex` alike), so labkit runs a linear function that finds the same spans
DIGIT_GROUPS_AT_BOUNDARY = r"\d{1,3}(?=(?:\d{3})*\b)"
_DIGIT_RUNS = regex.compile(r"\d+")
_IS_ONIG_WORD = regex.compile(_ONIG_WORD).match


def digit_groups_at_boundary(text: str) -> list[tuple[int, int]]:
    r"""The matches of ``\d{1,3}(?=(?:\d{3})*\b)`` in linear time: a run of digits followed by
    the end or by a character that is not a word character (Oniguruma's) is cut in threes from
    the right; a run followed by a word character (a letter, ``²``) has no match at all, since
    no word boundary follows any of its digits.

    Example:
        >>> digit_groups_at_boundary("1234567 89x 12")
        [(0, 1), (1, 4), (4, 7), (12, 14)]
    """
    out: list[tuple[int, int]] = []
    for run in _DIGIT_RUNS.finditer(text):
        start, end = run.span()
        if end < len(text) and _IS_ONIG_WORD(text, end):
            continue
        first = start + ((end - start) % 3 or 3)
        out.append((start, first))
        out.extend((k, k + 3) for k in range(first, end, 3))
    return out


class _Untranslatable(ValueError):
    """A pattern whose Oniguruma meaning labkit does not spell for `regex` (the reason)."""
# with case folding onig also matches multi-character folds ('ss' matches 'ß'), and its 'i' does
# not match 'İ' where `regex`'s does (a class may hold an i): such scopes are refused
_FOLD_RISKS = ("ss", "st", "ff", "fi", "fl", "i", "[")


def regex_difference(source: str) -> str | None:
    r"""Why labkit's ``regex`` would not find what tokenizers' Oniguruma finds with this
    pattern, or None (then :func:`pattern_matches` finds the same spans).

    Example:
        >>> regex_difference(r"\s+|\p{L}+") is None, regex_difference(r"\w+|[^\w\s]+") is None, regex_difference(r"\h")
        (True, True, "escape \\h (Oniguruma's meaning differs)")
    """
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):
            if source[i + 1] in _UNSUPPORTED_ESCAPES:
                return f"escape \\{source[i + 1]} (Oniguruma's meaning differs)"
            i += 2
            continue
        if source.startswith("[:", i) or source.startswith("&&", i):
            return f"{source[i:i + 2]!r} (POSIX classes and class intersections differ)"
        i += 1
    for scope in _case_insensitive_scopes(source):
        folded = scope.lower()
        if not scope.isascii() or "\\p" in folded or any(pair in folded for pair in _FOLD_RISKS):
            return f"case-insensitive {scope[:30]!r} (non-ASCII text, properties or multi-character folds)"
    try:
        regex.compile(_onig_source(source), regex.MULTILINE)
    except _Untranslatable as exc:
        return str(exc)
    except regex.error as exc:
        return f"Python's regex does not compile it ({exc})"
    return None


def _case_insensitive_scopes(source: str) -> list[str]:
    r"""The parts of a pattern an inline ``i`` flag covers: ``(?i:...)`` to its closing
    parenthesis, ``(?i)`` to the end.

    Example:
        >>> _case_insensitive_scopes(r"(?i:'s|'t)|\p{L}+"), _case_insensitive_scopes("a(?i)b")
        (["'s|'t)"], ['b'])
    """
    scopes = []
    for match in regex.finditer(r"\(\?([a-zA-Z-]*)([:)])", source):
        flags = match.group(1).split("-")[0]
        if "i" not in flags:
            continue
        if match.group(2) == ")":
            scopes.append(source[match.end():])
            continue
        depth, i = 1, match.end()
        while i < len(source) and depth:
            if source[i] == "\\":
                i += 2
                continue
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        scopes.append(source[match.end():i])
    return scopes


def may_match_empty(pattern: dict) -> bool:
    r"""Whether a ``{"String": s}`` / ``{"Regex": r}`` pattern can match the empty string somewhere
    (its shortest match has no width); True when that cannot be worked out.

    Example:
        >>> may_match_empty({"Regex": r"a*"}), may_match_empty({"Regex": r"\s+|\p{L}"}), may_match_empty({"String": ""})
        (True, False, True)
    """
    import re._parser as sre_parse  # the shortest width of Python's parse of the same pattern

    if "String" in pattern:
        return not pattern["String"]
    # \p{..} and \P{..} are one character wide: a plain letter stands in for them in `re`'s parser
    source = regex.sub(r"\\[pP](?:\{[^}]*\}|[A-Za-z])", "x", pattern.get("Regex", ""))
    try:
        with warnings.catch_warnings():  # (`re` warns of constructs it reads otherwise in the future)
            warnings.simplefilter("ignore")
            return sre_parse.parse(source).getwidth()[0] == 0
    except Exception:  # a construct `re` does not parse: assume it can
        return True


def _onig_source(source: str) -> str:
    r"""The pattern for `regex` with MULTILINE, meaning what Oniguruma means: ``^`` outside a class
    must not match at the very end after a final newline (Oniguruma's does not), and the word
    escapes ``\w \W \b \B`` (in a class too) take Oniguruma's word characters. Raises
    _Untranslatable for a class it cannot spell that way.

    Example:
        >>> regex.findall(_onig_source(r"\w+"), "x²\u200dy")
        ['x²', 'y']
    """
    out, i = [], 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            escape = source[i + 1:i + 2]
            out.append(_ONIG_WORD_ESCAPES.get(escape, source[i:i + 2]))
            i += 2
            continue
        if char == "[":
            end = _class_end(source, i)
            out.append(_onig_class(source[i + 1:end]))
            i = end + 1
            continue
        out.append(r"(?:^(?!\Z))" if char == "^" else char)
        i += 1
    return "".join(out)


def _class_end(source: str, start: int) -> int:
    """The index of the ``]`` that closes the class opened at ``start`` (nested classes counted)."""
    depth, i = 0, start
    while i < len(source):
        if source[i] == "\\":
            i += 2
            continue
        if source[i] == "[":
            depth += 1
        elif source[i] == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise _Untranslatable("an unclosed '['")


def _onig_class(body: str) -> str:
    r"""One class ``[body]`` for `regex`: as written, or, if it holds ``\w`` or ``\W``, the same
    set of characters with Oniguruma's word characters (lookaheads around plain classes).

    Example:
        >>> regex.findall(_onig_class(r"^\w\s"), "a²!\u200c ")  # in a class, ² is no word character
        ['²', '!', '\u200c']
    """
    negated = body.startswith("^")
    items, i, word, inner = [], 1 if negated else 0, None, []
    while i < len(body):
        if body[i] == "\\":
            escape = body[i + 1:i + 2]
            if escape in "wW" and escape:
                if word is not None or "-" in (body[i - 1:i], body[i + 2:i + 3]):
                    raise _Untranslatable(f"the class [{body[:30]}] (both word escapes, or one in a range)")
                word = escape
            elif escape in "bB" and escape:
                raise _Untranslatable(f"\\{escape} in the class [{body[:30]}] (a backspace or nothing in Oniguruma)")
            else:
                inner.append(body[i:i + 2])
            i += 2
            continue
        if body[i] == "[" and i > (1 if negated else 0):
            # Oniguruma reads a '[' inside a class as a nested class, `regex` as a '['
            raise _Untranslatable(f"the nested class in [{body[:30]}]")
        inner.append(body[i])
        i += 1
    if word is None:
        return f"[{body}]"
    rest = "".join(inner)
    if rest.startswith(("^", "]")) or rest.endswith("-") and not rest.endswith("\\-"):
        raise _Untranslatable(f"the class [{body[:30]}] (its other items do not stand alone)")
    other = f"[{rest}]" if rest else None
    # inside a class Oniguruma's word characters leave out ² ³ ¹ ¼ ½ ¾ (measured): the joiners differ only
    word_chars = rf"(?![{_JOINERS}])\w"
    not_word = rf"[{_JOINERS}]|\W"
    if word == "w" and not negated:  # other items, or a word character
        return f"(?:{word_chars}|{other})" if other else f"(?:{word_chars})"
    if word == "w":  # neither another item nor a word character
        return f"(?:(?!{other})(?:{not_word}))" if other else f"(?:{not_word})"
    if not negated:  # other items, or not a word character
        return f"(?:{other}|{not_word})" if other else f"(?:{not_word})"
    return f"(?:(?!{other}){word_chars})" if other else f"(?:{word_chars})"  # a word character, no other item


_REGEX_CACHE: dict[str, regex.Pattern] = {}


def _compiled(source: str) -> regex.Pattern:
    compiled = _REGEX_CACHE.get(source)
    if compiled is None:
        try:
            compiled = regex.compile(_onig_source(source), regex.MULTILINE)  # Oniguruma's ^ and $ are line anchors
        except regex.error as exc:
            raise LabkitError(f"regex {source[:60]!r} does not compile ({exc})") from None
        _REGEX_CACHE[source] = compiled
    return compiled


def replace(piece: Piece, pattern: dict, content: str) -> Piece:
    """Replace normaliser: each match becomes ``content``, aligned to the character before the
    match's end (an empty match at the start: to the piece's start), as tokenizers aligns it.

    Example:
        >>> replace(Piece.of("ab"), {"Regex": "x*"}, "-").text
        '-a-b-'
    """
    matches = pattern_matches(pattern, piece.text)
    if not matches:
        return piece
    last = 0
    text = piece.text
    out_text, out_align = [], []
    for start, end in matches:
        out_text.append(text[last:start])
        out_align.extend(piece.align[last:start])
        span = piece.align[end - 1] if end > 0 else (piece.origin, piece.origin)
        out_text.append(content)
        out_align.extend([span] * len(content))
        last = end
    out_text.append(text[last:])
    out_align.extend(piece.align[last:])
    return Piece("".join(out_text), out_align, piece.origin)


def prepend(piece: Piece, prefix: str) -> Piece:
    """Prepend ``prefix`` to a non-empty piece (the prefix shares the first char's span)."""
    if not piece.text or not prefix:
        return piece
    first = piece.align[0]
    return Piece(prefix + piece.text, [first] * len(prefix) + piece.align, piece.origin)


_GRAPHEME = regex.compile(r"\X")
_CHARSMAPS: BoundedDict = BoundedDict(16)  # base64 blob -> parsed CharsMap (a file's normaliser is parsed once)
_PLANS: BoundedDict = BoundedDict(16)  # base64 blob -> {grapheme: what the charsmap does to it}
PLAN_LIMIT = 1 << 16
_UNSEEN = object()


def _charsmap(blob_b64: str):
    from labkit.algorithms.charsmap import CharsMap, charsmap_from_base64

    cached = _CHARSMAPS.get(blob_b64)
    if cached is None:
        blob = charsmap_from_base64(blob_b64, "normalizer Precompiled")
        cached = _CHARSMAPS[blob_b64] = CharsMap(blob)
    return cached


def _push_replacement(changes: list[tuple[str, int]], old: str, new: str) -> None:
    """``old`` -> ``new`` as changes: extra chars are insertions; fewer chars fold the
    removals into the last change written (possibly an earlier char's, as tokenizers does)."""
    diff = len(new) - len(old)
    changes.extend((c, 0) for c in new)
    if diff > 0:
        for k in range(len(changes) - diff, len(changes)):
            changes[k] = (changes[k][0], 1)
    elif diff < 0 and changes:
        char, change = changes[-1]
        changes[-1] = (char, change + diff)


def precompiled(piece: Piece, blob_b64: str) -> Piece:
    """The Precompiled normaliser as tokenizers applies a SentencePiece charsmap: per grapheme
    cluster under 6 bytes the rule of its shortest matching prefix, else char by char.

    Example (botchan's nmt_nfkc charsmap widens a half-width kana and its voicing mark,
    leaving the mark combining, as tokenizers does):
        >>> import base64, labkit
        >>> charsmap = labkit.load("botchan-unigram").vocab.normalizer["charsmap"]
        >>> piece = precompiled(Piece.of("\\uff76\\uff9e"), base64.b64encode(charsmap).decode())
        >>> piece.text == "\\u30ab\\u3099", piece.align
        (True, [(0, 1), (1, 2)])
    """
    cmap = _charsmap(blob_b64)
    plans = _PLANS.get(blob_b64)
    if plans is None or len(plans) > PLAN_LIMIT:
        plans = _PLANS[blob_b64] = {}  # bounded: emptied when full (the common graphemes come back)

    def rule(chunk: str) -> str | None:
        matches = cmap.prefix_matches(chunk.encode("utf-8"))
        return cmap.replacement(matches[0][1]) if matches else None

    def plan_of(grapheme: str) -> tuple | None:
        # ((old, new or None), ...): the whole grapheme's rule, else each char's; None: no rule at all
        if len(grapheme.encode("utf-8")) < 6:
            norm = rule(grapheme)
            if norm is not None:
                return ((grapheme, norm),)
        plan = tuple((char, rule(char)) for char in grapheme)
        return plan if any(norm is not None for _, norm in plan) else None

    graphemes = _GRAPHEME.findall(piece.text)
    modified = False
    for grapheme in set(graphemes):  # a text repeats its graphemes: each is looked up once
        plan = plans.get(grapheme, _UNSEEN)
        if plan is _UNSEEN:
            plan = plans[grapheme] = plan_of(grapheme)
        modified = modified or plan is not None
    if not modified:
        return piece
    changes: list[tuple[str, int]] = []
    for grapheme in graphemes:
        plan = plans[grapheme]
        if plan is None:
            changes.extend([(char, 0) for char in grapheme])
            continue
        for old, norm in plan:
            if norm is None:
                changes.append((old, 0))
            else:
                _push_replacement(changes, old, norm)
    return transform(piece, changes)


# Nmt: the ASCII and C1 controls it drops, and the code points it reads as a space (tokenizers'
# normalizers/unicode.rs, the table of SentencePiece's nmt_nfkc rules without the NFKC)
NMT_DROPPED = frozenset([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
NMT_SPACES = frozenset([0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD])


def nmt(piece: Piece) -> Piece:
    r"""Nmt: drop control characters, then read the whitespace-like ones as a plain space.

    Example:
        >>> from labkit.algorithms.hf_normalize import nmt, Piece
        >>> nmt(Piece.of("a\x01b\tc\u200bd")).text
        'ab c d'
    """
    piece = _filter(piece, lambda c: ord(c) not in NMT_DROPPED)
    return _map_chars(piece, lambda c: " " if ord(c) in NMT_SPACES else c)


def byte_level_chars(piece: Piece) -> Piece:
    """Each char -> the GPT-2 byte-alphabet chars of its UTF-8 bytes (extra bytes inserted):
    the ByteLevel normaliser, and the byte mapping of the ByteLevel pre-tokenizer.

    Example:
        >>> from labkit.algorithms.hf_normalize import byte_level_chars, Piece
        >>> piece = byte_level_chars(Piece.of("hé"))
        >>> piece.text, piece.align
        ('hÃ©', [(0, 1), (1, 2), (1, 2)])
    """
    changes = []
    for char in piece.text:
        spelled = bytes_to_gpt2(char.encode("utf-8"))
        changes.append((spelled[0], 0))
        changes.extend(zip(spelled[1:], repeat(1)))  # each byte past the first is inserted
    return transform(piece, changes)


IMPLEMENTED = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Strip", "Replace", "Prepend",
               "BertNormalizer", "Precompiled", "Nmt", "ByteLevel", "Sequence"}


def normalize(piece: Piece, parts: list[dict]) -> Piece:
    """Run a flattened normaliser list over a piece.

    Example:
        >>> from labkit.algorithms.hf_normalize import normalize, Piece
        >>> normalize(Piece.of(" Ab "), [{"type": "Lowercase"}]).text
        ' ab '
    """
    for node in parts:
        kind = node["type"]
        if kind in ("NFC", "NFD", "NFKC", "NFKD"):
            piece = unicode_form(piece, kind)
        elif kind == "Lowercase":
            piece = _map_chars(piece, lower_char)
        elif kind == "StripAccents":
            piece = _filter(piece, lambda c: not _is_mark(c))
        elif kind == "Strip":
            piece = _strip(piece, node)
        elif kind == "Replace":
            piece = replace(piece, node["pattern"], node.get("content", ""))
        elif kind == "Prepend":
            piece = prepend(piece, node.get("prepend", ""))
        elif kind == "BertNormalizer":
            piece = bert(piece, node)
        elif kind == "Nmt":
            piece = nmt(piece)
        elif kind == "ByteLevel":
            piece = byte_level_chars(piece)
        elif kind == "Precompiled":
            if node.get("precompiled_charsmap"):
                piece = precompiled(piece, node["precompiled_charsmap"])
        else:
            raise LabkitError(f"normalizer {kind} is not implemented by labkit")
    return piece
