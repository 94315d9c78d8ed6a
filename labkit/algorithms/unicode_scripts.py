"""The UnicodeScripts pre-tokenizer: cut the text where the writing system changes.

Each character has a script (Latin, Greek, Han, Common for digits and punctuation, ...).
Reading left to right, a piece ends where a character's script differs from the last
script seen. Two rules come from SentencePiece's piece validity check, which ``tokenizers``
copies: Hiragana, Katakana and the prolonged sound mark U+30FC count as Han (so Japanese
stays in one piece), and a space has no script ("Any"). A character with no script never
starts a piece: it joins the piece before it, and at the very start of a text, where there
is none, it is dropped.

The scripts are ``tokenizers``' own table (``data/hf/tokenizers_unicode_scripts.json``, copied
from its source by ``tools/make_tokenizers_scripts.py``): an older Unicode than Python's, so a
code point assigned since then has no script there. ``tests/test_unicode_scripts.py``
measures the table on every code point against ``tokenizers``.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.algorithms.unicode_scripts import script_pieces
    >>> text = "  ab 日本 ーカ1x"
    >>> [text[start:end] for start, end in script_pieces(text)]
    ['ab ', '日本 ーカ', '1', 'x']
"""
from __future__ import annotations

import json
from bisect import bisect_right
from functools import lru_cache

from labkit.paths import data_path

ANY = "Any"  # no script: never starts a piece
# SentencePiece's fixes, in tokenizers' fixed_script: Japanese kana and U+30FC go with Han
AS_HAN = frozenset(("Hiragana", "Katakana"))
PROLONGED_SOUND_MARK = "\u30fc"


@lru_cache(maxsize=1)
def _table() -> tuple[list[int], list[int], list[str]]:
    """(first code points, last code points, scripts) of tokenizers' ranges, in order."""
    doc = json.loads(data_path("hf/tokenizers_unicode_scripts.json").read_text(encoding="utf-8"))
    firsts, lasts, names = [], [], []
    for first, last, name in doc["ranges"]:
        firsts.append(first)
        lasts.append(last)
        names.append(name)
    return firsts, lasts, names


def raw_script(char: str) -> str:
    """The script tokenizers' table gives a character ("Any" where it lists none).

    Example:
        >>> from labkit.algorithms.unicode_scripts import raw_script
        >>> raw_script("a"), raw_script("い"), raw_script("1"), raw_script("\\U0001FAE8")
        ('Latin', 'Hiragana', 'Common', 'Any')
    """
    firsts, lasts, names = _table()
    code = ord(char)
    at = bisect_right(firsts, code) - 1
    return names[at] if at >= 0 and code <= lasts[at] else ANY


@lru_cache(maxsize=4096)
def script(char: str) -> str:
    """The script UnicodeScripts compares: the table's, with kana and U+30FC as Han and a
    space as no script.

    Example:
        >>> from labkit.algorithms.unicode_scripts import script
        >>> script("カ"), script("ー"), script(" "), script("\\t")
        ('Han', 'Han', 'Any', 'Common')
    """
    if char == PROLONGED_SOUND_MARK:
        return "Han"
    if char == " ":
        return ANY
    name = raw_script(char)
    return "Han" if name in AS_HAN else name


def script_pieces(text: str) -> list[tuple[int, int]]:
    """[start, end) of each piece: a new piece wherever a character with a script differs
    from the last script seen; characters with no script before the first one are dropped.

    Example (a leading space is dropped; a space inside stays with the piece before it):
        >>> from labkit.algorithms.unicode_scripts import script_pieces
        >>> script_pieces(" a b1"), script_pieces("   ")
        ([(1, 4), (4, 5)], [])
    """
    starts = []
    last = None
    for index, char in enumerate(text):
        current = script(char)
        if current == ANY:
            continue
        if current != last:
            starts.append(index)
            last = current
    starts.append(len(text))
    return list(zip(starts, starts[1:]))
