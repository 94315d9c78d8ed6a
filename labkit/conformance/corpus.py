"""The mixed corpus every configuration is compared on.

Botchan lines (what the vocabularies were trained on), every Unicode whitespace character,
combining marks in both normal forms, CJK, Thai, Devanagari, Arabic, emoji ZWJ sequences,
digits and punctuation, long repeats, and, per configuration, text that looks like its
added tokens or their prefixes.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.conformance.corpus import mixed_corpus
    >>> len(mixed_corpus(["<|im_end|>"]))
    218
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Sequence

from labkit.paths import data_path

# every character Python's str.isspace() or Unicode's White_Space property calls whitespace,
# plus the zero-width ones that look like it
UNICODE_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"

SCRIPTS = (
    "我爱自然语言处理。東京は日本の首都です",
    "한국어 텍스트",
    "ภาษาไทยง่ายนิดเดียว",
    "नमस्ते दुनिया, क्षत्रिय",
    "مرحبا بالعالم ١٢٣",
    "Ελληνικά και русский текст",
    "👨\u200d👩\u200d👧\u200d👦 family 🏳\ufe0f\u200d🌈 flag 👍🏽 ok",
    "mixed: naïve café 東京 🙂 done",
)

COMBINING = (
    "cafe\u0301", "café", "e\u0301\u0302x", "a\u0308\u0301", "\u212b ANGSTROM", "\u00c5 A-ring",
    "ﬁne ﬂow", "① ② ⑩", "Ｈｅｌｌｏ　Ｗｏｒｌｄ", "x\u0323\u0307 q\u0307\u0323",
    "ｶﾀｶﾅ", "Ⅻ ㎏ ㍿", "\u1100\u1161\u11a8", "ÀÉÎÕÜ àéîõü",
)

EDGES = (
    "", " ", "  ", " x", "x ", "  x  y  ", "x\ny", "\n\n", "\t tab", "Hello world", "hello World!",
    "don't you're I'm we'll they've", "3.14159 2024-01-01 1,000,000 12345678901",
    "a-b_c.d/e\\f|g", "(parens) [brackets] {braces} <angle>", "!!!???...", "$100 & 50% off #tag @user",
    "▁x ▁▁y", "<0x41> <unk> [UNK] </s> <s>", "##ing ing## </w>", "UPPER lower MiXeD",
    "a" * 300, " " * 120, "ab" * 150, "1234567890" * 20, "!" * 100, "the " * 60,
    "\u00a0nbsp\u00a0", "\r\n windows \r\n",
)


@lru_cache(maxsize=None)
def botchan_lines(count: int = 40) -> tuple[str, ...]:
    """``count`` non-empty botchan lines spread evenly through the corpus.

    Example:
        >>> from labkit.conformance.corpus import botchan_lines
        >>> botchan_lines(2)[0][:20]
        "\\ufeffProject Gutenberg's"
    """
    lines = [line for line in data_path("corpus/botchan.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    step = max(1, len(lines) // max(1, count))
    return tuple(lines[::step][:count])


def whitespace_strings() -> list[str]:
    """Each whitespace character alone, between words, and doubled.

    Example:
        >>> from labkit.conformance.corpus import whitespace_strings
        >>> whitespace_strings()[0]
        '\\t'
    """
    out = []
    for ch in UNICODE_WHITESPACE + ZERO_WIDTH:
        out.extend([ch, f"a{ch}b", f"{ch}{ch}x"])
    return out


def special_lookalikes(specials: Sequence[str]) -> list[str]:
    """Text that holds, touches, or nearly holds each added-token spelling.

    Example:
        >>> from labkit.conformance.corpus import special_lookalikes
        >>> special_lookalikes(["<s>"])[:3]
        ['<s>', 'x <s> y', 'x<s>y']
    """
    out: list[str] = []
    for token in specials:
        out += [token, f"x {token} y", f"x{token}y", f"{token}{token}", f" {token} ", f"{token}\n",
                token[:-1], f"x {token[:-1]} y", token.upper(), f"word{token} {token}word"]
    return out


def mixed_corpus(specials: Sequence[str] = (), *, botchan: int = 40) -> list[str]:
    """The strings one configuration is compared on, duplicates removed, order kept.

    Example:
        >>> from labkit.conformance.corpus import mixed_corpus
        >>> "cafe\\u0301" in mixed_corpus()
        True
    """
    texts = [*botchan_lines(botchan), *EDGES, *whitespace_strings(), *SCRIPTS, *COMBINING]
    texts += [unicodedata.normalize(form, s) for s in COMBINING + SCRIPTS[:4] for form in ("NFD", "NFKC")]
    texts += special_lookalikes(specials)
    return list(dict.fromkeys(texts))
