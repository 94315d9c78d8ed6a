"""llama.cpp's WordPiece tokenizer (``tokenizer.ggml.model = "bert"``), as its loop runs.

A "bert" GGUF holds WordPiece with a "phantom space": a word-initial piece ``w`` is spelled
``▁w``, a continuation ``##w`` is spelled ``w``. llama.cpp (``llm_tokenizer_wpm_session`` in
``src/llama-vocab.cpp``) does not run BERT's normaliser:

* per code point, with its own Unicode tables (``src/unicode-data.cpp``, copied into
  ``data/gguf/llama_cpp_unicode.json``): whitespace ends a word; NUL, U+FFFD and every
  ``\\p{C}`` code point vanish; with strip_accents every ``\\p{M}`` vanishes after a "NFD"
  that maps each code point to the *first* code point of its decomposition; with lowercase
  a one-to-one lowercase map; ``\\p{P}``, an ASCII ``\\p{S}`` and a CJK ideograph are words of
  their own. ``lowercase`` and ``strip_accents`` come from the header (both default on;
  strip_accents defaults to lowercase).
* each word, with ``▁`` in front, is matched greedily longest first against *every* token
  (its spelling as stored), with no length limit; a word that cannot be matched to its end
  is one unknown id.
* decoding (``llama_detokenize``): control and unknown tokens their text only when shown,
  user-defined ones their text, normal ones their text with ``▁`` as a space, others nothing;
  no space is stripped from the start; then llama.cpp's ``clean_spaces`` passes.

Read at llama.cpp commit 0c1e5709 (llama-cpp-python 0.3.36) and measured against it
(:mod:`labkit.conformance.random_gguf_wpm`). Introduced in notebook ``04_wordpiece``.

Example:
    >>> from labkit.algorithms.llama_wpm import preprocess
    >>> preprocess("Héllo, WORLD!", lowercase=True, strip_accents=True)
    ['hello', ',', 'world', '!']
"""
from __future__ import annotations

import bisect
import json
from functools import lru_cache
from typing import Sequence

SPACE = "\u2581"
NUMBER, LETTER, SEPARATOR, ACCENT_MARK, PUNCTUATION, SYMBOL, CONTROL = 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80
UNDEFINED = 0x1


@lru_cache(maxsize=1)
def _tables() -> tuple:
    """llama.cpp's tables: (range starts, range flags, whitespace, lowercase map, nfd firsts, nfd rows)."""
    from labkit.paths import data_path

    doc = json.loads(data_path("gguf/llama_cpp_unicode.json").read_text(encoding="utf-8"))
    starts = [start for start, _ in doc["ranges_flags"]]
    flags = [value for _, value in doc["ranges_flags"]]
    nfd_rows = doc["ranges_nfd"]
    return (starts, flags, frozenset(doc["whitespace"]), {a: b for a, b in doc["lowercase"]},
            [row[0] for row in nfd_rows], nfd_rows)


def category_flags(cpt: int) -> int:
    """llama.cpp's category bits of a code point (``unicode_cpt_flags_from_cpt``, without whitespace).

    Example:
        >>> category_flags(ord("a")) == LETTER, category_flags(ord("!")) == PUNCTUATION
        (True, True)
    """
    starts, flags = _tables()[:2]
    if cpt >= starts[-1]:
        return UNDEFINED
    return flags[bisect.bisect_right(starts, cpt) - 1]


def is_whitespace(cpt: int) -> bool:
    """Whether llama.cpp's whitespace set holds the code point.

    Example:
        >>> is_whitespace(0x85), is_whitespace(0x200B)
        (True, False)
    """
    return cpt in _tables()[2]


def to_lower(cpt: int) -> int:
    """llama.cpp's ``unicode_tolower``: one code point to one (none maps to two).

    Example:
        >>> chr(to_lower(ord("Å"))), chr(to_lower(0x130))
        ('å', 'i')
    """
    return _tables()[3].get(cpt, cpt)


def nfd_first(cpt: int) -> int:
    """llama.cpp's ``unicode_cpts_normalize_nfd`` for one code point: the first code point of
    its decomposition (``é`` -> ``e``; the mark is not kept), itself when its range has none.

    Example:
        >>> chr(nfd_first(ord("é"))), chr(nfd_first(ord("a")))
        ('e', 'a')
    """
    firsts, rows = _tables()[4:]
    index = bisect.bisect_right(firsts, cpt) - 1
    if index >= 0:
        first, last, nfd = rows[index]
        if first <= cpt <= last:
            return nfd
    return cpt


def _is_chinese_char(cpt: int) -> bool:
    # llama.cpp's ranges (0x2B920, not 0x2B820, as in tokenizers' Rust code)
    return (0x4E00 <= cpt <= 0x9FFF or 0x3400 <= cpt <= 0x4DBF or 0x20000 <= cpt <= 0x2A6DF
            or 0x2A700 <= cpt <= 0x2B73F or 0x2B740 <= cpt <= 0x2B81F or 0x2B920 <= cpt <= 0x2CEAF
            or 0xF900 <= cpt <= 0xFAFF or 0x2F800 <= cpt <= 0x2FA1F)


def preprocess(text: str, *, lowercase: bool, strip_accents: bool) -> list[str]:
    """The words llama.cpp's WPM session makes of ``text`` (see the module docstring).

    Example:
        >>> preprocess("a\u200bb 中文", lowercase=False, strip_accents=False)
        ['ab', '中', '文']
    """
    return [word for word, _, _ in words_with_spans(text, lowercase=lowercase, strip_accents=strip_accents)]


def words_with_spans(text: str, *, lowercase: bool, strip_accents: bool) -> list[tuple[str, int, int]]:
    """:func:`preprocess`'s words, each with the (start, end) characters of ``text`` it came from.

    Example:
        >>> words_with_spans("Ab, c", lowercase=True, strip_accents=True)
        [('ab', 0, 2), (',', 2, 3), ('c', 4, 5)]
    """
    words: list[tuple[str, int, int]] = []
    current, start, end = "", 0, 0

    def finish() -> None:
        nonlocal current
        if current:
            words.append((current, start, end))
        current = ""

    for index, ch in enumerate(text):
        cpt = ord(ch)
        if 0xD800 <= cpt <= 0xDFFF:  # a lone surrogate is no UTF-8: llama.cpp reads U+FFFD, which vanishes
            continue
        if strip_accents:
            cpt = nfd_first(cpt)
        if is_whitespace(cpt):
            finish()
            continue
        flags = category_flags(cpt)
        if cpt == 0 or cpt == 0xFFFD or flags & CONTROL:
            continue
        if strip_accents and flags & ACCENT_MARK:
            continue
        char = chr(to_lower(cpt) if lowercase else cpt)
        if flags & PUNCTUATION or (cpt < 0x7F and flags & SYMBOL) or _is_chinese_char(cpt):
            finish()
            words.append((char, index, index + 1))  # a word of its own
            continue
        if not current:
            start = index
        current += char
        end = index + 1
    finish()
    return words


def match_word(word: str, token_to_id: dict[str, int], max_token_chars: int, unk_id: int | None) -> list[int]:
    """The ids of one word: ``▁`` + the word matched greedily, longest token first from each
    position; a word that cannot be matched to its end is ``unk_id`` (``[]`` when the file has
    none: llama.cpp then writes the id -1, which labkit cannot give; the engine refuses such a file).

    Example:
        >>> match_word("ab", {"▁a": 0, "b": 1, "[UNK]": 2}, 2, 2), match_word("ac", {"▁a": 0, "[UNK]": 2}, 2, 2)
        ([0, 1], [2])
    """
    word = SPACE + word
    out: list[int] = []
    i, n = 0, len(word)
    while i < n:
        for j in range(min(n, i + max_token_chars), i, -1):
            token = token_to_id.get(word[i:j])
            if token is not None:
                out.append(token)
                i = j
                break
        else:
            return [unk_id] if unk_id is not None else []
    return out


def clean_spaces(text: bytes) -> bytes:
    """llama.cpp's ``clean_spaces`` passes over detokenized bytes: no space before ``?!.,``,
    a lone ``'`` between spaces loses both, and `` 's`` `` 'm`` `` 're`` `` 've`` lose their space.

    Example:
        >>> clean_spaces(b"hi , it ' s here . I 've")
        b"hi, it's here. I've"
    """
    data = bytearray(text)
    out = bytearray(data[:1])
    for i in range(1, len(data)):
        if data[i - 1] == 0x20 and data[i] in b"?!.,":
            out.pop()
        out.append(data[i])
    data, out = out, bytearray(out[:1])
    i = 1
    while i < len(data):
        x = data[i]
        if x == 0x27 and i + 1 < len(data) and data[i - 1] == 0x20 and data[i + 1] == 0x20:
            out.pop()  # the space before
            out.append(x)
            data[i + 1] = 0  # and the space after: llama.cpp writes a NUL there, which the next check reads
            i += 2
            continue
        out.append(x)
        i += 1
    data, out = out, bytearray(out[:1])
    for i in range(1, len(data)):
        x = data[i]
        if data[i - 1] == 0x20 and x == 0x27 and i + 1 < len(data):
            x1 = data[i + 1]
            if x1 in b"sm" or (i + 2 < len(data) and (data[i + 1:i + 3] in (b"re", b"ve"))):
                out.pop()
        out.append(x)
    return bytes(out)


def detokenize(ids: Sequence[int], spellings: Sequence[str], kinds: Sequence[int], *, special: bool) -> str:
    """llama.cpp's ``llama_detokenize`` (remove_special off) for a "bert" vocabulary, from the
    tokens as the GGUF spells them, read as UTF-8 with each bad sequence one U+FFFD.

    Example:
        >>> detokenize([0, 1, 2, 3], ["[CLS]", "▁hello", "lo", "▁!"], [3, 1, 1, 1], special=False)
        ' hellolo!'
    """
    out = bytearray()
    for token in ids:
        kind, spelling = kinds[token], spellings[token]
        if kind in (2, 3):
            out += spelling.encode("utf-8") if special else b""
        elif kind == 4:
            out += spelling.encode("utf-8")
        elif kind == 1:
            out += spelling.replace(SPACE, " ").encode("utf-8")
        # byte tokens cannot be decoded in a bert vocabulary (llama.cpp aborts): refused at load
    return clean_spaces(bytes(out)).decode("utf-8", "replace")
