"""BERT's basic tokenizer: clean the text, isolate CJK characters, strip accents, lowercase,
then split on whitespace and punctuation. WordPiece (:mod:`labkit.algorithms.wordpiece`)
then runs on each word this produces.

The steps, in the order ``tokenizers``' ``BertNormalizer`` and ``BertPreTokenizer`` apply them:

1. clean: drop NUL, U+FFFD and control/format/private-use characters; every whitespace
   character (tab, newline, no-break space, ideographic space, ...) becomes ``' '``;
2. CJK: put a space on each side of every CJK ideograph, so each one is its own word;
3. strip accents (uncased models): decompose (NFD) and drop the nonspacing marks;
4. lowercase, one character at a time (no Greek final-sigma rule);
5. split on spaces (dropped) and on punctuation (kept, one character per word).

Which characters count as "control", "punctuation" or "nonspacing mark" is decided by the
Unicode tables compiled into ``tokenizers`` (the ``unicode_categories`` crate, an older
Unicode than Python's). The tables below were measured from tokenizers 0.23.3 over every
code point, so labkit answers exactly as it does; Python's own ``unicodedata`` (Unicode
14 here) would disagree on a few hundred newer characters. Lowercasing uses Rust's newer
tables, which know 55 letters that Python 3.11 does not (``LOWERCASE_EXTRA``).
Introduced in notebook ``04_wordpiece``.

Example:
    >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
    >>> BertBasicTokenizer().tokenize("Héllo, 世界!")
    ['hello', ',', '世', '界', '!']
"""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field

from labkit.core import LabkitError

# ----------------------------------------------------------------------------- character classes

# Unicode White_Space (Rust's char::is_whitespace); after cleaning only ' ' is left of these
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
# the CJK Unified Ideographs blocks BERT isolates (its own list, not a Unicode property)
CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)
# characters whose NFD in Python (Unicode 14) is newer than the NFD tokenizers applies
NFD_EXCEPTIONS = {0x11938: "\U00011938"}


class _RangeSet:
    """Membership in a sorted tuple of inclusive code-point ranges (binary search)."""

    def __init__(self, ranges):
        self.ranges = tuple(sorted(ranges))
        self._starts = [a for a, _ in self.ranges]

    def __contains__(self, ch: str) -> bool:
        cp = ord(ch)
        i = bisect_right(self._starts, cp) - 1
        return i >= 0 and cp <= self.ranges[i][1]

    def regex_class(self) -> str:
        """The body of a regex character class for these ranges."""
        return "".join(_class_char(a) if a == b else f"{_class_char(a)}-{_class_char(b)}" for a, b in self.ranges)


def _class_char(cp: int) -> str:
    return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"


def is_control(ch: str) -> bool:
    """True for what cleaning removes: control, format and private-use characters (tab,
    newline and carriage return are whitespace instead).

    Example:
        >>> is_control("\\u200b"), is_control("\\n")
        (True, False)
    """
    return ch in _CONTROL


def is_whitespace(ch: str) -> bool:
    """True for Unicode White_Space.

    Example (the ideographic space is; the zero-width space is not):
        >>> [hex(ord(c)) for c in "a\\u3000b\\u200bc" if is_whitespace(c)]
        ['0x3000']
    """
    return ch in WHITE_SPACE


def is_punctuation(ch: str) -> bool:
    """True for ASCII punctuation (``$``, ``+``, ``^`` too) and Unicode punctuation
    (P*, as tokenizers knows it).

    Example:
        >>> "".join(c for c in "¿Qué? $5 + 1^2" if is_punctuation(c))
        '¿?$+^'
    """
    return ch in _PUNCTUATION


def is_chinese_char(ch: str) -> bool:
    """True for a CJK ideograph that BERT isolates.

    Example (a Han character is isolated; hiragana is not):
        >>> [is_chinese_char(c) for c in "世か"]
        [True, False]
    """
    return ch in _CJK


def is_nonspacing_mark(ch: str) -> bool:
    """True for a nonspacing mark (Mn) that accent stripping drops.

    Example (é decomposed: the acute accent is the mark):
        >>> import unicodedata
        >>> [is_nonspacing_mark(c) for c in unicodedata.normalize("NFD", "é")]
        [False, True]
    """
    return ch in _NONSPACING


# ----------------------------------------------------------------------------- the tokenizer


@dataclass
class BasicSteps:
    """The text after each step of the basic tokenizer, for showing them one by one.

    Example:
        >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
        >>> BertBasicTokenizer().steps("Héllo!").words
        ['hello', '!']
    """

    text: str
    cleaned: str
    cjk_spaced: str
    accents_stripped: str
    lowercased: str
    words: list[str] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str]]:
        """(step name, text) pairs in order."""
        return [("input", self.text), ("clean text", self.cleaned), ("isolate CJK", self.cjk_spaced),
                ("strip accents", self.accents_stripped), ("lowercase", self.lowercased),
                ("split", " | ".join(self.words))]


class BertBasicTokenizer:
    """BERT's normaliser and pre-tokenizer (``BertNormalizer`` + ``BertPreTokenizer``).

    ``strip_accents=None`` follows ``lowercase`` (uncased models strip accents).
    Example:
        >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
        >>> BertBasicTokenizer().tokenize("Don't stop")
        ['don', "'", 't', 'stop']

    (introduced in notebook ``04_wordpiece``)
    """

    def __init__(self, *, lowercase: bool = True, strip_accents: bool | None = None,
                 clean_text: bool = True, handle_chinese_chars: bool = True):
        self.lowercase = bool(lowercase)
        self.strip_accents = self.lowercase if strip_accents is None else bool(strip_accents)
        self.clean_text = bool(clean_text)
        self.handle_chinese_chars = bool(handle_chinese_chars)
        self._char_cache: dict[str, str] = {}
        self._reorder_chars: set[str] = set()
        # ASCII fast path: which ASCII characters cleaning removes or turns into a space
        ascii_map = {}
        if self.clean_text:
            for cp in range(128):
                ch = chr(cp)
                if cp == 0 or is_control(ch):
                    ascii_map[cp] = None
                elif is_whitespace(ch):
                    ascii_map[cp] = " "
        self._ascii_table = str.maketrans(ascii_map)
        self._ascii_removed = re.compile("[" + "".join(_class_char(cp) for cp, v in ascii_map.items() if v is None) + "]") if any(
            v is None for v in ascii_map.values()) else None
        punct = _PUNCTUATION.regex_class()
        space = "".join(_class_char(ord(c)) for c in WHITE_SPACE)
        # a word is a run of anything but space and punctuation; a punctuation mark stands alone
        self.word_pattern = re.compile(f"[^{space}{punct}]+|[{punct}]")

    @classmethod
    def from_vocab(cls, vocab) -> "BertBasicTokenizer":
        """The basic tokenizer a VocabData's ``normalizer`` dict describes.

        Example:
            >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
            >>> from labkit.formats.gguf import read_gguf
            >>> from labkit.paths import bundled_path
            >>> BertBasicTokenizer.from_vocab(read_gguf(bundled_path("bert-bge"))).lowercase
            True
        """
        norm = vocab.normalizer or {}
        return cls(
            lowercase=norm.get("lowercase", True),
            strip_accents=norm.get("strip_accents"),
            clean_text=norm.get("clean_text", True),
            handle_chinese_chars=norm.get("handle_chinese_chars", True),
        )

    def __repr__(self) -> str:
        return (f"BertBasicTokenizer(lowercase={self.lowercase}, strip_accents={self.strip_accents}, "
                f"clean_text={self.clean_text}, handle_chinese_chars={self.handle_chinese_chars})")

    # -- normalisation ------------------------------------------------------------
    def map_char(self, ch: str) -> str:
        """What one character becomes (clean, CJK, NFD minus marks, lowercase), before the
        canonical reordering of combining marks across characters.

        Example:
            >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
            >>> BertBasicTokenizer().map_char("É")
            'e'
        """
        out = self._char_cache.get(ch)
        if out is not None:
            return out
        if not isinstance(ch, str) or len(ch) != 1:
            raise LabkitError(f"BertBasicTokenizer.map_char takes one character, got {ch!r}")
        if self.clean_text and (ch == "\x00" or ch == "\ufffd" or is_control(ch)):
            out = ""
        elif self.clean_text and is_whitespace(ch):
            out = " "
        else:
            out = ch
            if self.strip_accents:
                out = "".join(c for c in _nfd(out) if not is_nonspacing_mark(c))
                if any(unicodedata.combining(c) for c in out):
                    # a mark that survives stripping may need NFD's reordering
                    self._reorder_chars.add(ch)
            if self.lowercase:
                out = "".join(lower_char(c) for c in out)
            if self.handle_chinese_chars and is_chinese_char(ch):
                out = f" {out} "
        self._char_cache[ch] = out
        return out

    def normalize_with_alignment(self, text: str) -> tuple[str, list[int] | None]:
        """(normalised text, alignment): ``alignment[k]`` is the index in ``text`` of the
        character that normalised character k came from; None means one-to-one.

        Example:
            >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
            >>> BertBasicTokenizer().normalize_with_alignment("a\\x00B")
            ('ab', [0, 2])
        """
        if not isinstance(text, str):
            raise LabkitError(f"BertBasicTokenizer: expected str, got {type(text).__name__}")
        if text.isascii():
            if self._ascii_removed is None or not self._ascii_removed.search(text):
                out = text.translate(self._ascii_table)
                return (out.lower() if self.lowercase else out), None
        if _has_surrogate(text):
            raise LabkitError(f"BertBasicTokenizer: text holds a lone surrogate, which is not valid Unicode text: {text[:40]!r}")
        parts: list[str] = []
        align: list[int] = []
        map_char = self.map_char
        for index, ch in enumerate(text):
            piece = map_char(ch)
            if len(piece) == 1:
                parts.append(piece)
                align.append(index)
            elif piece:
                parts.append(piece)
                align.extend([index] * len(piece))
        normalized = "".join(parts)
        reorder = self._reorder_chars
        if reorder and any(ch in reorder for ch in text):
            return self._reorder_marks(text)
        return normalized, align

    def normalize(self, text: str) -> str:
        """The normalised text.

        Example:
            >>> BertBasicTokenizer().normalize("\\u00dcn\\u00efcode\\tx")
            'unicode x'
        """
        return self.normalize_with_alignment(text)[0]

    def _reorder_marks(self, text: str) -> tuple[str, list[int]]:
        """Redo the strip-accents step with NFD's canonical reordering across characters
        (only needed when two combining marks that survive stripping meet out of order)."""
        decomposed: list[tuple[str, int]] = []
        for index, ch in enumerate(text):
            if self.clean_text and (ch == "\x00" or ch == "\ufffd" or is_control(ch)):
                continue
            if self.clean_text and is_whitespace(ch):
                decomposed.append((" ", index))
                continue
            cjk = self.handle_chinese_chars and is_chinese_char(ch)
            if cjk:
                decomposed.append((" ", index))
            decomposed.extend((c, index) for c in _nfd(ch))
            if cjk:
                decomposed.append((" ", index))
        # canonical ordering: stable sort by combining class inside runs of non-starters
        i, n = 0, len(decomposed)
        while i < n:
            if unicodedata.combining(decomposed[i][0]) == 0:
                i += 1
                continue
            j = i
            while j < n and unicodedata.combining(decomposed[j][0]) != 0:
                j += 1
            decomposed[i:j] = sorted(decomposed[i:j], key=lambda item: unicodedata.combining(item[0]))
            i = j
        chars: list[str] = []
        new_align: list[int] = []
        for c, index in decomposed:
            if is_nonspacing_mark(c):
                continue
            lowered = lower_char(c) if self.lowercase else c
            chars.append(lowered)
            new_align.extend([index] * len(lowered))
        return "".join(chars), new_align

    # -- splitting ------------------------------------------------------------------
    def split(self, normalized: str) -> list[tuple[str, int, int]]:
        """Words of normalised text as (word, start, end): spaces dropped, each punctuation
        mark its own word.

        Example:
            >>> BertBasicTokenizer().split("hi, you")
            [('hi', 0, 2), (',', 2, 3), ('you', 4, 7)]
        """
        return [(m.group(), m.start(), m.end()) for m in self.word_pattern.finditer(normalized)]

    def tokenize(self, text: str) -> list[str]:
        """Text -> words.

        Example:
            >>> BertBasicTokenizer().tokenize("Hello, world!")
            ['hello', ',', 'world', '!']
        """
        return self.word_pattern.findall(self.normalize(text))

    def tokenize_with_offsets(self, text: str) -> list[tuple[str, int, int]]:
        """Text -> (word, start, end) with offsets into ``text``.

        Example:
            >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
            >>> BertBasicTokenizer().tokenize_with_offsets(" Éa")
            [('ea', 1, 3)]
        """
        normalized, align = self.normalize_with_alignment(text)
        if align is None:
            return self.split(normalized)
        return [(w, align[s], align[e - 1] + 1) for w, s, e in self.split(normalized)]

    def steps(self, text: str) -> BasicSteps:
        """Each step's output separately, for teaching (the engine runs them fused).

        Example:
            >>> from labkit.algorithms.bert_basic import BertBasicTokenizer
            >>> BertBasicTokenizer().steps("Café 世界").cjk_spaced
            'Café  世  界 '
        """
        cleaned = "".join(
            "" if (ch == "\x00" or ch == "\ufffd" or is_control(ch)) else " " if is_whitespace(ch) else ch
            for ch in text
        ) if self.clean_text else text
        spaced = "".join(f" {ch} " if is_chinese_char(ch) else ch for ch in cleaned) if self.handle_chinese_chars else cleaned
        stripped = spaced
        if self.strip_accents:
            stripped = "".join(c for c in unicodedata.normalize("NFD", spaced) if not is_nonspacing_mark(c))
        lowered = "".join(lower_char(c) for c in stripped) if self.lowercase else stripped
        return BasicSteps(text, cleaned, spaced, stripped, lowered, self.word_pattern.findall(lowered))


def _nfd(ch: str) -> str:
    special = NFD_EXCEPTIONS.get(ord(ch))
    return special if special is not None else unicodedata.normalize("NFD", ch)


def lower_char(ch: str) -> str:
    """Lowercase as tokenizers does (Rust's tables know some letters Python's Unicode 14 does not).

    Example:
        >>> lower_char("A"), lower_char("\ua7cb")
        ('a', 'ɤ')
    """
    special = LOWERCASE_EXTRA.get(ord(ch))
    return chr(special) if special is not None else ch.lower()



def _has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


_SURROGATE = re.compile("[\ud800-\udfff]")


# ----------------------------------------------------------------------------- measured tables
# Measured from tokenizers 0.23.3 over every code point (see tests/test_wordpiece_unicode.py,
# which measures them again and compares).

# removed by cleaning: Cc (but tab, newline, CR), Cf, Co as tokenizers' tables know them, and U+FFFD
CONTROL_RANGES = (
    (0x0000, 0x0008), (0x000B, 0x000C), (0x000E, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD),
    (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x180E, 0x180E),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xE000, 0xF8FF),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0xFFFD, 0xFFFD), (0x110BD, 0x110BD), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F), (0xF0000, 0xFFFFD), (0x100000,
    0x10FFFD),
)

PUNCTUATION_RANGES = (
    (0x0021, 0x002F), (0x003A, 0x0040), (0x005B, 0x0060), (0x007B, 0x007E), (0x00A1, 0x00A1),
    (0x00A7, 0x00A7), (0x00AB, 0x00AB), (0x00B6, 0x00B7), (0x00BB, 0x00BB), (0x00BF, 0x00BF),
    (0x037E, 0x037E), (0x0387, 0x0387), (0x055A, 0x055F), (0x0589, 0x058A), (0x05BE, 0x05BE),
    (0x05C0, 0x05C0), (0x05C3, 0x05C3), (0x05C6, 0x05C6), (0x05F3, 0x05F4), (0x0609, 0x060A),
    (0x060C, 0x060D), (0x061B, 0x061B), (0x061E, 0x061F), (0x066A, 0x066D), (0x06D4, 0x06D4),
    (0x0700, 0x070D), (0x07F7, 0x07F9), (0x0830, 0x083E), (0x085E, 0x085E), (0x0964, 0x0965),
    (0x0970, 0x0970), (0x0AF0, 0x0AF0), (0x0DF4, 0x0DF4), (0x0E4F, 0x0E4F), (0x0E5A, 0x0E5B),
    (0x0F04, 0x0F12), (0x0F14, 0x0F14), (0x0F3A, 0x0F3D), (0x0F85, 0x0F85), (0x0FD0, 0x0FD4),
    (0x0FD9, 0x0FDA), (0x104A, 0x104F), (0x10FB, 0x10FB), (0x1360, 0x1368), (0x1400, 0x1400),
    (0x166D, 0x166E), (0x169B, 0x169C), (0x16EB, 0x16ED), (0x1735, 0x1736), (0x17D4, 0x17D6),
    (0x17D8, 0x17DA), (0x1800, 0x180A), (0x1944, 0x1945), (0x1A1E, 0x1A1F), (0x1AA0, 0x1AA6),
    (0x1AA8, 0x1AAD), (0x1B5A, 0x1B60), (0x1BFC, 0x1BFF), (0x1C3B, 0x1C3F), (0x1C7E, 0x1C7F),
    (0x1CC0, 0x1CC7), (0x1CD3, 0x1CD3), (0x2010, 0x2027), (0x2030, 0x2043), (0x2045, 0x2051),
    (0x2053, 0x205E), (0x207D, 0x207E), (0x208D, 0x208E), (0x2308, 0x230B), (0x2329, 0x232A),
    (0x2768, 0x2775), (0x27C5, 0x27C6), (0x27E6, 0x27EF), (0x2983, 0x2998), (0x29D8, 0x29DB),
    (0x29FC, 0x29FD), (0x2CF9, 0x2CFC), (0x2CFE, 0x2CFF), (0x2D70, 0x2D70), (0x2E00, 0x2E2E),
    (0x2E30, 0x2E42), (0x3001, 0x3003), (0x3008, 0x3011), (0x3014, 0x301F), (0x3030, 0x3030),
    (0x303D, 0x303D), (0x30A0, 0x30A0), (0x30FB, 0x30FB), (0xA4FE, 0xA4FF), (0xA60D, 0xA60F),
    (0xA673, 0xA673), (0xA67E, 0xA67E), (0xA6F2, 0xA6F7), (0xA874, 0xA877), (0xA8CE, 0xA8CF),
    (0xA8F8, 0xA8FA), (0xA8FC, 0xA8FC), (0xA92E, 0xA92F), (0xA95F, 0xA95F), (0xA9C1, 0xA9CD),
    (0xA9DE, 0xA9DF), (0xAA5C, 0xAA5F), (0xAADE, 0xAADF), (0xAAF0, 0xAAF1), (0xABEB, 0xABEB),
    (0xFD3E, 0xFD3F), (0xFE10, 0xFE19), (0xFE30, 0xFE52), (0xFE54, 0xFE61), (0xFE63, 0xFE63),
    (0xFE68, 0xFE68), (0xFE6A, 0xFE6B), (0xFF01, 0xFF03), (0xFF05, 0xFF0A), (0xFF0C, 0xFF0F),
    (0xFF1A, 0xFF1B), (0xFF1F, 0xFF20), (0xFF3B, 0xFF3D), (0xFF3F, 0xFF3F), (0xFF5B, 0xFF5B),
    (0xFF5D, 0xFF5D), (0xFF5F, 0xFF65), (0x10100, 0x10102), (0x1039F, 0x1039F), (0x103D0, 0x103D0),
    (0x1056F, 0x1056F), (0x10857, 0x10857), (0x1091F, 0x1091F), (0x1093F, 0x1093F), (0x10A50,
    0x10A58), (0x10A7F, 0x10A7F), (0x10AF0, 0x10AF6), (0x10B39, 0x10B3F), (0x10B99, 0x10B9C),
    (0x11047, 0x1104D), (0x110BB, 0x110BC), (0x110BE, 0x110C1), (0x11140, 0x11143), (0x11174,
    0x11175), (0x111C5, 0x111C9), (0x111CD, 0x111CD), (0x111DB, 0x111DB), (0x111DD, 0x111DF),
    (0x11238, 0x1123D), (0x112A9, 0x112A9), (0x114C6, 0x114C6), (0x115C1, 0x115D7), (0x11641,
    0x11643), (0x1173C, 0x1173E), (0x12470, 0x12474), (0x16A6E, 0x16A6F), (0x16AF5, 0x16AF5),
    (0x16B37, 0x16B3B), (0x16B44, 0x16B44), (0x1BC9F, 0x1BC9F), (0x1DA87, 0x1DA8B),
)

NONSPACING_MARK_RANGES = (
    (0x0300, 0x033F), (0x0342, 0x0342), (0x0345, 0x036F), (0x0483, 0x0487), (0x0591, 0x05BD),
    (0x05BF, 0x05BF), (0x05C1, 0x05C2), (0x05C4, 0x05C5), (0x05C7, 0x05C7), (0x0610, 0x061A),
    (0x064B, 0x065F), (0x0670, 0x0670), (0x06D6, 0x06DC), (0x06DF, 0x06E4), (0x06E7, 0x06E8),
    (0x06EA, 0x06ED), (0x0711, 0x0711), (0x0730, 0x074A), (0x07A6, 0x07B0), (0x07EB, 0x07F3),
    (0x0816, 0x0819), (0x081B, 0x0823), (0x0825, 0x0827), (0x0829, 0x082D), (0x0859, 0x085B),
    (0x08E3, 0x0902), (0x093A, 0x093A), (0x093C, 0x093C), (0x0941, 0x0948), (0x094D, 0x094D),
    (0x0951, 0x0957), (0x0962, 0x0963), (0x0981, 0x0981), (0x09BC, 0x09BC), (0x09C1, 0x09C4),
    (0x09CD, 0x09CD), (0x09E2, 0x09E3), (0x0A01, 0x0A02), (0x0A3C, 0x0A3C), (0x0A41, 0x0A42),
    (0x0A47, 0x0A48), (0x0A4B, 0x0A4D), (0x0A51, 0x0A51), (0x0A70, 0x0A71), (0x0A75, 0x0A75),
    (0x0A81, 0x0A82), (0x0ABC, 0x0ABC), (0x0AC1, 0x0AC5), (0x0AC7, 0x0AC8), (0x0ACD, 0x0ACD),
    (0x0AE2, 0x0AE3), (0x0B01, 0x0B01), (0x0B3C, 0x0B3C), (0x0B3F, 0x0B3F), (0x0B41, 0x0B44),
    (0x0B4D, 0x0B4D), (0x0B56, 0x0B56), (0x0B62, 0x0B63), (0x0B82, 0x0B82), (0x0BC0, 0x0BC0),
    (0x0BCD, 0x0BCD), (0x0C00, 0x0C00), (0x0C3E, 0x0C40), (0x0C46, 0x0C47), (0x0C4A, 0x0C4D),
    (0x0C55, 0x0C56), (0x0C62, 0x0C63), (0x0C81, 0x0C81), (0x0CBC, 0x0CBC), (0x0CBF, 0x0CBF),
    (0x0CC6, 0x0CC6), (0x0CCC, 0x0CCD), (0x0CE2, 0x0CE3), (0x0D01, 0x0D01), (0x0D41, 0x0D44),
    (0x0D4D, 0x0D4D), (0x0D62, 0x0D63), (0x0DCA, 0x0DCA), (0x0DD2, 0x0DD4), (0x0DD6, 0x0DD6),
    (0x0E31, 0x0E31), (0x0E34, 0x0E3A), (0x0E47, 0x0E4E), (0x0EB1, 0x0EB1), (0x0EB4, 0x0EB9),
    (0x0EBB, 0x0EBC), (0x0EC8, 0x0ECD), (0x0F18, 0x0F19), (0x0F35, 0x0F35), (0x0F37, 0x0F37),
    (0x0F39, 0x0F39), (0x0F71, 0x0F72), (0x0F74, 0x0F74), (0x0F77, 0x0F77), (0x0F79, 0x0F7E),
    (0x0F80, 0x0F80), (0x0F82, 0x0F84), (0x0F86, 0x0F87), (0x0F8D, 0x0F92), (0x0F94, 0x0F97),
    (0x0F99, 0x0F9C), (0x0F9E, 0x0FA1), (0x0FA3, 0x0FA6), (0x0FA8, 0x0FAB), (0x0FAD, 0x0FB8),
    (0x0FBA, 0x0FBC), (0x0FC6, 0x0FC6), (0x102D, 0x1030), (0x1032, 0x1037), (0x1039, 0x103A),
    (0x103D, 0x103E), (0x1058, 0x1059), (0x105E, 0x1060), (0x1071, 0x1074), (0x1082, 0x1082),
    (0x1085, 0x1086), (0x108D, 0x108D), (0x109D, 0x109D), (0x135D, 0x135F), (0x1712, 0x1714),
    (0x1732, 0x1734), (0x1752, 0x1753), (0x1772, 0x1773), (0x17B4, 0x17B5), (0x17B7, 0x17BD),
    (0x17C6, 0x17C6), (0x17C9, 0x17D3), (0x17DD, 0x17DD), (0x180B, 0x180D), (0x18A9, 0x18A9),
    (0x1920, 0x1922), (0x1927, 0x1928), (0x1932, 0x1932), (0x1939, 0x193B), (0x1A17, 0x1A18),
    (0x1A1B, 0x1A1B), (0x1A56, 0x1A56), (0x1A58, 0x1A5E), (0x1A60, 0x1A60), (0x1A62, 0x1A62),
    (0x1A65, 0x1A6C), (0x1A73, 0x1A7C), (0x1A7F, 0x1A7F), (0x1AB0, 0x1ABD), (0x1B00, 0x1B03),
    (0x1B34, 0x1B34), (0x1B36, 0x1B3A), (0x1B3C, 0x1B3C), (0x1B42, 0x1B42), (0x1B6B, 0x1B73),
    (0x1B80, 0x1B81), (0x1BA2, 0x1BA5), (0x1BA8, 0x1BA9), (0x1BAB, 0x1BAD), (0x1BE6, 0x1BE6),
    (0x1BE8, 0x1BE9), (0x1BED, 0x1BED), (0x1BEF, 0x1BF1), (0x1C2C, 0x1C33), (0x1C36, 0x1C37),
    (0x1CD0, 0x1CD2), (0x1CD4, 0x1CE0), (0x1CE2, 0x1CE8), (0x1CED, 0x1CED), (0x1CF4, 0x1CF4),
    (0x1CF8, 0x1CF9), (0x1DC0, 0x1DF5), (0x1DFC, 0x1DFF), (0x20D0, 0x20DC), (0x20E1, 0x20E1),
    (0x20E5, 0x20F0), (0x2CEF, 0x2CF1), (0x2D7F, 0x2D7F), (0x2DE0, 0x2DFF), (0x302A, 0x302D),
    (0x3099, 0x309A), (0xA66F, 0xA66F), (0xA674, 0xA67D), (0xA69E, 0xA69F), (0xA6F0, 0xA6F1),
    (0xA802, 0xA802), (0xA806, 0xA806), (0xA80B, 0xA80B), (0xA825, 0xA826), (0xA8C4, 0xA8C4),
    (0xA8E0, 0xA8F1), (0xA926, 0xA92D), (0xA947, 0xA951), (0xA980, 0xA982), (0xA9B3, 0xA9B3),
    (0xA9B6, 0xA9B9), (0xA9BC, 0xA9BC), (0xA9E5, 0xA9E5), (0xAA29, 0xAA2E), (0xAA31, 0xAA32),
    (0xAA35, 0xAA36), (0xAA43, 0xAA43), (0xAA4C, 0xAA4C), (0xAA7C, 0xAA7C), (0xAAB0, 0xAAB0),
    (0xAAB2, 0xAAB4), (0xAAB7, 0xAAB8), (0xAABE, 0xAABF), (0xAAC1, 0xAAC1), (0xAAEC, 0xAAED),
    (0xAAF6, 0xAAF6), (0xABE5, 0xABE5), (0xABE8, 0xABE8), (0xABED, 0xABED), (0xFB1E, 0xFB1E),
    (0xFE00, 0xFE0F), (0xFE20, 0xFE2F), (0x101FD, 0x101FD), (0x102E0, 0x102E0), (0x10376, 0x1037A),
    (0x10A01, 0x10A03), (0x10A05, 0x10A06), (0x10A0C, 0x10A0F), (0x10A38, 0x10A3A), (0x10A3F,
    0x10A3F), (0x10AE5, 0x10AE6), (0x11001, 0x11001), (0x11038, 0x11046), (0x1107F, 0x11081),
    (0x110B3, 0x110B6), (0x110B9, 0x110BA), (0x11100, 0x11102), (0x11127, 0x1112B), (0x1112D,
    0x1112D), (0x11130, 0x11134), (0x11173, 0x11173), (0x11180, 0x11181), (0x111B6, 0x111BE),
    (0x111CA, 0x111CC), (0x1122F, 0x11231), (0x11234, 0x11234), (0x11236, 0x11237), (0x112DF,
    0x112DF), (0x112E3, 0x112EA), (0x11300, 0x11301), (0x1133C, 0x1133C), (0x11340, 0x11340),
    (0x11366, 0x1136C), (0x11370, 0x11374), (0x114B3, 0x114B8), (0x114BA, 0x114BA), (0x114BF,
    0x114C0), (0x114C2, 0x114C3), (0x115B2, 0x115B5), (0x115BC, 0x115BD), (0x115BF, 0x115C0),
    (0x115DC, 0x115DD), (0x11633, 0x1163A), (0x1163D, 0x1163D), (0x1163F, 0x11640), (0x116AB,
    0x116AB), (0x116AD, 0x116AD), (0x116B0, 0x116B5), (0x116B7, 0x116B7), (0x1171D, 0x1171F),
    (0x11722, 0x11725), (0x11727, 0x1172B), (0x16AF0, 0x16AF4), (0x16B30, 0x16B36), (0x16F8F,
    0x16F92), (0x1BC9D, 0x1BC9E), (0x1D167, 0x1D169), (0x1D17B, 0x1D182), (0x1D185, 0x1D18B),
    (0x1D1AA, 0x1D1AD), (0x1D242, 0x1D244), (0x1DA00, 0x1DA36), (0x1DA3B, 0x1DA6C), (0x1DA75,
    0x1DA75), (0x1DA84, 0x1DA84), (0x1DA9B, 0x1DA9F), (0x1DAA1, 0x1DAAF), (0x1E8D0, 0x1E8D6),
    (0xE0100, 0xE01EF),
)

# letters Rust lowercases but Python 3.11 (Unicode 14) does not know
LOWERCASE_EXTRA = {
    0x1C89: 0x1C8A, 0xA7CB: 0x0264, 0xA7CC: 0xA7CD, 0xA7CE: 0xA7CF, 0xA7D2: 0xA7D3, 0xA7D4: 0xA7D5,
    0xA7DA: 0xA7DB, 0xA7DC: 0x019B, 0x10D50: 0x10D70, 0x10D51: 0x10D71, 0x10D52: 0x10D72, 0x10D53:
    0x10D73, 0x10D54: 0x10D74, 0x10D55: 0x10D75, 0x10D56: 0x10D76, 0x10D57: 0x10D77, 0x10D58:
    0x10D78, 0x10D59: 0x10D79, 0x10D5A: 0x10D7A, 0x10D5B: 0x10D7B, 0x10D5C: 0x10D7C, 0x10D5D:
    0x10D7D, 0x10D5E: 0x10D7E, 0x10D5F: 0x10D7F, 0x10D60: 0x10D80, 0x10D61: 0x10D81, 0x10D62:
    0x10D82, 0x10D63: 0x10D83, 0x10D64: 0x10D84, 0x10D65: 0x10D85, 0x16EA0: 0x16EBB, 0x16EA1:
    0x16EBC, 0x16EA2: 0x16EBD, 0x16EA3: 0x16EBE, 0x16EA4: 0x16EBF, 0x16EA5: 0x16EC0, 0x16EA6:
    0x16EC1, 0x16EA7: 0x16EC2, 0x16EA8: 0x16EC3, 0x16EA9: 0x16EC4, 0x16EAA: 0x16EC5, 0x16EAB:
    0x16EC6, 0x16EAC: 0x16EC7, 0x16EAD: 0x16EC8, 0x16EAE: 0x16EC9, 0x16EAF: 0x16ECA, 0x16EB0:
    0x16ECB, 0x16EB1: 0x16ECC, 0x16EB2: 0x16ECD, 0x16EB3: 0x16ECE, 0x16EB4: 0x16ECF, 0x16EB5:
    0x16ED0, 0x16EB6: 0x16ED1, 0x16EB7: 0x16ED2, 0x16EB8: 0x16ED3,
}

_CONTROL = _RangeSet(CONTROL_RANGES)
_PUNCTUATION = _RangeSet(PUNCTUATION_RANGES)
_NONSPACING = _RangeSet(NONSPACING_MARK_RANGES)
_CJK = _RangeSet(CJK_RANGES)
