"""The character tables of labkit.algorithms.bert_basic, measured again from tokenizers over
every code point: control (what cleaning removes), punctuation (what the pre-tokenizer
isolates), nonspacing marks (what accent stripping drops) and lowercasing."""
from __future__ import annotations

import unicodedata

from tokenizers import normalizers, pre_tokenizers

from labkit.algorithms import bert_basic
from labkit.algorithms.bert_basic import BertBasicTokenizer

ALL = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
BLOCK = 20_000
# unassigned in Python's Unicode and unknown to Rust's lowercase table: identity everywhere
UNASSIGNED = frozenset(
    c for c in ALL if unicodedata.category(c) == "Cn" and ord(c) not in bert_basic.LOWERCASE_EXTRA
)


def _through(normalizer, chars, separator):
    """Each char normalised on its own, in batches joined by a separator it leaves alone."""
    out = []
    for k in range(0, len(chars), BLOCK):
        chunk = chars[k : k + BLOCK]
        parts = normalizer.normalize_str(separator + separator.join(chunk) + separator).split(separator)[1:-1]
        assert len(parts) == len(chunk)
        out.extend(parts)
    return out


def test_cleaning_matches_every_code_point():
    ref = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    chars = [c for c in ALL if c != "Z"]
    mine = BertBasicTokenizer(lowercase=False, strip_accents=False, clean_text=True, handle_chinese_chars=False)
    for ch, want in zip(chars, _through(ref, chars, "Z")):
        if ch in UNASSIGNED:
            assert want == ch, hex(ord(ch))  # an unassigned character is kept by both
        else:
            assert mine.map_char(ch) == want, hex(ord(ch))


def test_punctuation_matches_every_code_point():
    ref = pre_tokenizers.BertPreTokenizer()
    chars = [c for c in ALL if c != "x" and c not in bert_basic.WHITE_SPACE]
    isolated = set()
    for k in range(0, len(chars), BLOCK):
        chunk = chars[k : k + BLOCK]
        isolated.update(p for p, _ in ref.pre_tokenize_str("x" + "x".join(chunk) + "x") if len(p) == 1 and p != "x")
    mine = {c for c in chars if bert_basic.is_punctuation(c)}
    assert mine == isolated


def test_accent_stripping_and_lowercasing_match_every_code_point():
    ref = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=True)
    mine = BertBasicTokenizer(lowercase=True, strip_accents=True, clean_text=False, handle_chinese_chars=False)
    chars = [c for c in ALL if c != "\x00"]
    for ch, want in zip(chars, _through(ref, chars, "\x00")):
        if ch in UNASSIGNED:
            assert want == ch, hex(ord(ch))  # nothing to strip or lowercase in Python or Rust
        else:
            assert mine.map_char(ch) == want, hex(ord(ch))


def test_python_unicode_differs_from_tokenizers_somewhere():
    # why the tables exist: Python's own categories disagree with tokenizers' on newer characters
    python_punct = {c for c in ALL if unicodedata.category(c).startswith("P")}
    mine = {c for c in ALL if bert_basic.is_punctuation(c) and not c.isascii()}
    assert python_punct - mine  # e.g. U+2E5D, punctuation since Unicode 14
    assert bert_basic.is_punctuation("$") and unicodedata.category("$") == "Sc"
