"""``tokenizers``' pre-tokenizers over aligned pieces, in pure Python.

Every pre-tokenizer is a split of each piece by a pattern (a regex, a string, a character
class) with one of five behaviours (Removed, Isolated, MergedWithPrevious, MergedWithNext,
Contiguous), optionally inverted, and ByteLevel / Metaspace also rewrite the text. Empty
pieces are dropped, as ``tokenizers`` drops them.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.algorithms.hf_pretokenize import pre_tokenize, Piece
    >>> [p.text for p in pre_tokenize([Piece.of("a b")], [{"type": "WhitespaceSplit"}])]
    ['a', 'b']
"""
from __future__ import annotations

import unicodedata

import regex

from labkit.algorithms.bert_basic import is_punctuation, is_whitespace
from labkit.algorithms.hf_normalize import Piece, byte_level_chars, pattern_matches, prepend
from labkit.algorithms.unicode_scripts import script_pieces
from labkit.core import LabkitError

# tokenizers' ByteLevel regex (GPT-2's), run by Oniguruma there and by `regex` here
BYTE_LEVEL_REGEX = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
# Rust regex's Unicode \w and \s, spelled out (Python's differ)
_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"
WHITESPACE_REGEX = regex.compile(rf"[{_WORD}]+|[^{_WORD}\p{{White_Space}}]+")


# Punctuation and BertPreTokenizer test punctuation with tokenizers' (older) tables, which labkit's
# BERT engine measured (bert_basic.is_punctuation). Digits tests Rust's char::is_numeric, whose tables are newer than Python's (Unicode 14): these
# code points are numbers there too (measured on every code point against tokenizers 0.23)
NUMERIC_EXTRA_RANGES = (
    (0x10D40, 0x10D49), (0x116D0, 0x116E3), (0x11BF0, 0x11BF9), (0x11DE0, 0x11DE9), (0x11F50, 0x11F59),
    (0x16130, 0x16139), (0x16D70, 0x16D79), (0x16FF4, 0x16FF6), (0x1CCF0, 0x1CCF9), (0x1D2C0, 0x1D2D3),
    (0x1E4F0, 0x1E4F9), (0x1E5F1, 0x1E5FA),
)
_NUMERIC_EXTRA = frozenset(cp for a, b in NUMERIC_EXTRA_RANGES for cp in range(a, b + 1))


def _is_numeric(char: str) -> bool:
    """A number as Digits tests it (Rust's tables: Python's N categories and NUMERIC_EXTRA)."""
    return unicodedata.category(char) in ("Nd", "Nl", "No") or ord(char) in _NUMERIC_EXTRA


def _char_matches(test, text: str) -> list[tuple[int, int]]:
    return [(i, i + 1) for i, c in enumerate(text) if test(c)]


def _segments(matches: list[tuple[int, int]], length: int, invert: bool) -> list[tuple[int, int, bool]]:
    """(start, end, is_match) covering the text, as tokenizers' Pattern::find_matches gives."""
    if length == 0:
        return [(0, 0, False)]
    out = []
    prev = 0
    for start, end in matches:
        if start > prev:
            out.append((prev, start, invert))
        out.append((start, end, not invert))
        prev = end
    if prev < length:
        out.append((prev, length, invert))
    return out


def split(piece: Piece, matches: list[tuple[int, int]], behavior: str, invert: bool = False) -> list[Piece]:
    """Split one piece at pattern matches with one of tokenizers' five behaviours.

    Example:
        >>> from labkit.algorithms.hf_pretokenize import split, Piece
        >>> [p.text for p in split(Piece.of("a-b"), [(1, 2)], "Isolated")]
        ['a', '-', 'b']
    """
    segments = _segments(matches, len(piece.text), invert)
    spans: list[list] = []  # [start, end, remove]
    if behavior == "Isolated":
        spans = [[s, e, False] for s, e, _ in segments]
    elif behavior == "Removed":
        spans = [[s, e, m] for s, e, m in segments]
    # Contiguous, MergedWithPrevious and MergedWithNext below are alike on purpose: each is one
    # of tokenizers' SplitDelimiterBehavior rules, differing only in when a span joins its neighbour
    elif behavior == "Contiguous":
        previous = False
        for s, e, m in segments:
            if m == previous and spans:
                spans[-1][1] = e
            else:
                spans.append([s, e, False])
            previous = m
    elif behavior == "MergedWithPrevious":
        previous = False
        for s, e, m in segments:
            if m and not previous and spans:
                spans[-1][1] = e
            else:
                spans.append([s, e, False])
            previous = m
    elif behavior == "MergedWithNext":
        previous = False
        for s, e, m in reversed(segments):
            if m and not previous and spans:
                spans[-1][0] = s
            else:
                spans.append([s, e, False])
            previous = m
        spans.reverse()
    else:
        raise LabkitError(f"pre_tokenizer split behavior {behavior!r} is unknown")
    return [piece.slice(s, e) for s, e, remove in spans if not remove and e > s]


def _metaspace(piece: Piece, node: dict) -> list[Piece]:
    replacement = node.get("replacement", "\u2581")
    text = piece.text.replace(" ", replacement)
    piece = Piece(text, piece.align, piece.origin)
    scheme = node.get("prepend_scheme", "always")
    if not text.startswith(replacement):
        if scheme == "always" or (scheme == "first" and piece.origin == 0 and (not piece.align or piece.align[0][0] == 0)):
            piece = prepend(piece, replacement)
    if node.get("split", True):
        return split(piece, _char_matches(lambda c: c == replacement, piece.text), "MergedWithNext")
    return [piece] if piece.text else []


def _byte_level(piece: Piece, node: dict) -> list[Piece]:
    if node.get("add_prefix_space", True) and not piece.text.startswith(" "):
        piece = prepend(piece, " ")
    if node.get("use_regex", True):
        parts = split(piece, [m.span() for m in BYTE_LEVEL_REGEX.finditer(piece.text)], "Isolated")
    else:
        parts = [piece] if piece.text else []
    return [byte_level_chars(p) for p in parts]


def _split_node(piece: Piece, node: dict) -> list[Piece]:
    pattern = node["pattern"]
    return split(piece, pattern_matches(pattern, piece.text), node.get("behavior", "Isolated"), bool(node.get("invert", False)))


FIXED_LENGTH_DEFAULT = 5  # tokenizers' default when a FixedLength node has no "length"

IMPLEMENTED = {"Whitespace", "WhitespaceSplit", "Punctuation", "Digits", "BertPreTokenizer", "CharDelimiterSplit",
               "Split", "Metaspace", "ByteLevel", "FixedLength", "UnicodeScripts", "Sequence"}


def fixed_length(piece: Piece, length: int) -> list[Piece]:
    """FixedLength: pieces of ``length`` characters (spaces count; the last may be shorter).

    Example:
        >>> from labkit.algorithms.hf_pretokenize import fixed_length, Piece
        >>> [(p.text, p.span(0, len(p.text))) for p in fixed_length(Piece.of("abcdefg h"), 3)]
        [('abc', (0, 3)), ('def', (3, 6)), ('g h', (6, 9))]
    """
    return [piece.slice(start, start + length) for start in range(0, len(piece.text), length)]


def pre_tokenize_one(piece: Piece, node: dict) -> list[Piece]:
    """One pre-tokenizer over one piece.

    Example:
        >>> from labkit.algorithms.hf_pretokenize import pre_tokenize_one, Piece
        >>> [p.text for p in pre_tokenize_one(Piece.of("a1"), {"type": "Digits"})]
        ['a', '1']
    """
    kind = node["type"]
    if kind == "Whitespace":
        return split(piece, [m.span() for m in WHITESPACE_REGEX.finditer(piece.text)], "Removed", True)
    if kind == "WhitespaceSplit":
        return split(piece, _char_matches(is_whitespace, piece.text), "Removed")
    if kind == "Punctuation":
        return split(piece, _char_matches(is_punctuation, piece.text), node.get("behavior", "Isolated"))
    if kind == "Digits":
        behavior = "Isolated" if node.get("individual_digits", False) else "Contiguous"
        return split(piece, _char_matches(_is_numeric, piece.text), behavior)
    if kind == "BertPreTokenizer":
        out = []
        for part in split(piece, _char_matches(is_whitespace, piece.text), "Removed"):
            out.extend(split(part, _char_matches(is_punctuation, part.text), "Isolated"))
        return out
    if kind == "CharDelimiterSplit":
        delimiter = node["delimiter"]
        return split(piece, _char_matches(lambda c: c == delimiter, piece.text), "Removed")
    if kind == "Split":
        return _split_node(piece, node)
    if kind == "Metaspace":
        return _metaspace(piece, node)
    if kind == "ByteLevel":
        return _byte_level(piece, node)
    if kind == "UnicodeScripts":
        return [piece.slice(start, end) for start, end in script_pieces(piece.text)]
    if kind == "FixedLength":
        return fixed_length(piece, node.get("length", FIXED_LENGTH_DEFAULT))
    raise LabkitError(f"pre_tokenizer {kind} is not implemented by labkit")


def pre_tokenize(pieces: list[Piece], parts: list[dict]) -> list[Piece]:
    """A flattened pre-tokenizer list over pieces (each part splits every piece further).

    Example:
        >>> from labkit.algorithms.hf_pretokenize import pre_tokenize, Piece
        >>> [p.text for p in pre_tokenize([Piece.of("a b")], [{"type": "Whitespace"}])]
        ['a', 'b']
    """
    for node in parts:
        out: list[Piece] = []
        for piece in pieces:
            out.extend(pre_tokenize_one(piece, node))
        pieces = out
    return pieces
