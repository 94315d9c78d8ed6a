"""SentencePiece's char and word models: no merging at all, only cutting and looking up.

A model trained with ``model_type=char`` cuts normalised text into characters, a
user-defined piece (the longest that matches) staying whole. One trained with
``model_type=word`` cuts it into words, each starting at a ``▁`` (``SplitIntoWords``, with
its defaults whatever the model was trained with); user-defined pieces are not looked for.
Each symbol is then looked up as a symbol BPE leaves is: among the normal and user-defined
pieces only. Anything else is unknown: a spelling no piece has, an UNUSED piece's, a control
or unknown piece's (unless an ordinary piece spells it too: then that one). With byte
fallback an unknown symbol is one ``<0xNN>`` piece per UTF-8 byte, else ``<unk>``, and a run
of unknown symbols fuses into one ``<unk>``, across words too.

sentencepiece's ``char_model.cc``, ``word_model.cc`` and ``model_interface.cc``
(``SplitIntoWords``), and the processor's ``PopulateSentencePieceText``; the lookup rule was
measured against sentencepiece 0.2.3 on random models (:mod:`labkit.conformance.random_spm`).
Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> words("▁the▁▁cat")
    ['▁the', '▁', '▁cat']
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from labkit.algorithms.spm_bpe import SPACE

# a word starts at the text's start and at every '▁', and runs to the next '▁'
_WORDS = re.compile(f"^[^{SPACE}]+|{SPACE}[^{SPACE}]*")


def words(text: str) -> list[str]:
    """Normalised text cut as the word model cuts it: ``SplitIntoWords`` with its defaults, a
    new word at the text's start and at each ``▁``. sentencepiece 0.2.3's word model calls it
    so whatever the trainer spec says: a model trained with ``treat_whitespace_as_suffix``
    (whose normaliser puts ``▁`` after words) or ``allow_whitespace_only_pieces`` is cut the
    same way (measured on random models, :mod:`labkit.conformance.random_spm`).

    Example:
        >>> words("ab▁▁c▁"), words("")
        (['ab', '▁', '▁c', '▁'], [])
    """
    return _WORDS.findall(text)


@lru_cache(maxsize=16)
def _user_pattern(user_defined: tuple[str, ...]) -> re.Pattern:
    """The user-defined pieces as one pattern, the longest first."""
    return re.compile("|".join(map(re.escape, sorted(user_defined, key=len, reverse=True))))


def characters(text: str, user_defined: Sequence[str] = ()) -> list[str]:
    """Normalised text cut as the char model cuts it: one symbol per character, but a
    user-defined piece that starts at a character (the longest one) stays whole.

    Example:
        >>> characters("a<sep>b", ["<sep>", "<s"])
        ['a', '<sep>', 'b']
    """
    if not user_defined:
        return list(text)
    out: list[str] = []
    cursor = 0
    # leftmost match, the longest first among those starting there: the prefix matcher's rule
    for match in _user_pattern(tuple(user_defined)).finditer(text):
        out += text[cursor:match.start()]
        out.append(match.group())
        cursor = match.end()
    out += text[cursor:]
    return out
