"""The mixed corpus every SentencePiece and GGUF conformance row is measured on.

Botchan lines plus the text that breaks tokenizers: every Unicode whitespace character,
combining marks in both normal forms, CJK, Thai, Devanagari, Arabic, emoji ZWJ sequences,
spellings that look like special tokens (or their prefixes) and long repeats.
Introduced in notebook ``14_conformance_matrix``.

Example: ``len(mixed_corpus(botchan_lines=20)) > 100`` -> ``True``
"""
from __future__ import annotations

import unicodedata

from labkit.paths import data_path

# every code point with the Unicode White_Space property, plus the zero-width ones people paste
WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\u200b\u200c\u200d\u2060\ufeff"
)
SCRIPTS = [
    "東京は日本の首都です。", "我爱自然语言处理", "안녕하세요 세계",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ", "नमस्ते दुनिया, क्षत्रिय", "مرحبا بالعالم، كيف حالك؟",
    "Ελληνικά και кириллица", "👩‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 ok", "ﬁ ﬂ ① Ⅻ ｶﾀｶﾅ ＡＢＣ",
    "straße ŉ ǅ İstanbul", "e\u0301 a\u0300\u0301 o\u0308\u0304 \u1e9b\u0323",
]
LOOKALIKES = [
    "<s>", "</s>", "<unk>", "<pad>", "<sep>", "<ctl>", "<s", "<se", "sep>", "<<sep>>",
    "x <s> y", "a<sep>b", "<sep> tag", "tag <sep>", "<sep><sep>", " <sep> ", "<0x41>",
    "<|endoftext|>", "<|im_start|>user", "▁", "▁▁x", "a▁b", "⁇", " ⁇ ",
]
REPEATS = ["a" * 300, "ab" * 150, " " * 40 + "x", "x" + " " * 40, "1234567890" * 12,
           "!!!???..." * 10, "\n" * 20, "é" * 50, "語" * 60]


def _combining_cases() -> list[str]:
    words = ["café", "naïve", "Ångström", "résumé", "ḍḥ", "Việt Nam", "ǖ", "한국어"]
    out = []
    for word in words:
        out.append(unicodedata.normalize("NFC", word))
        out.append(unicodedata.normalize("NFD", word))
    return out


def _whitespace_cases() -> list[str]:
    out = []
    for ch in WHITESPACE:
        out += [f"a{ch}b", f"{ch}lead", f"trail{ch}", f"a {ch} b", ch * 3]
    return out


def mixed_corpus(botchan_lines: int = 40) -> list[str]:
    """The strings a conformance row compares on (deterministic; no duplicates).

    Example: ``"x <s> y" in mixed_corpus(0)`` -> ``True``
    """
    lines = data_path("corpus/botchan.txt").read_text(encoding="utf-8").splitlines()
    step = max(1, len(lines) // max(1, botchan_lines))
    picked = [line for line in lines[::step] if line.strip()][:botchan_lines]
    strings = [*picked, *_whitespace_cases(), *_combining_cases(), *SCRIPTS, *LOOKALIKES, *REPEATS,
               "", " ", "  Hello  world  ", "Hello\n\nworld", "tab\there", "don't 42 3.14"]
    seen: set[str] = set()
    out = []
    for s in strings:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out
