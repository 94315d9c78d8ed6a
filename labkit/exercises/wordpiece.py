"""Checkers for the "Try it" exercises of notebook 04 (WordPiece).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint, and returns True/False.
Introduced in notebook ``04_wordpiece``.

Example:
    >>> from labkit.exercises.wordpiece import check_wordpiece
    >>> check_wordpiece(["[UNK]", "un", "##aff", "##able"], "unaffable", ["un", "##aff", "##able"])
    right
    True
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from labkit.algorithms.bert_basic import BertBasicTokenizer
from labkit.algorithms.wordpiece import WordPiece
from labkit.exercises import answerable, verdict as _verdict


@lru_cache(maxsize=1)
def _bert():
    import labkit

    return labkit.load("bert-bge", engine="labkit")


@answerable
def check_basic_words(text: str, answer: Sequence[str]) -> bool:
    """Which words does BERT's (uncased) basic tokenizer cut ``text`` into?

    Example:
        >>> from labkit.exercises.wordpiece import check_basic_words
        >>> check_basic_words("Héllo, you!", ["hello", ",", "you", "!"])
        right
        True
    """
    return _verdict(list(answer) == BertBasicTokenizer().tokenize(text),
                    "clean, isolate CJK, strip accents, lowercase, then split on spaces and punctuation")


@answerable
def check_wordpiece(vocab: Sequence[str], word: str, answer: Sequence[str]) -> bool:
    """Which pieces does greedy longest-match WordPiece give ``word`` with this vocabulary
    (add "[UNK]" to it)?

    Example:
        >>> from labkit.exercises.wordpiece import check_wordpiece
        >>> check_wordpiece(["[UNK]", "a", "##b"], "ab", ["a", "##b"])
        right
        True
    """
    model = WordPiece.from_tokens(list(vocab))
    return _verdict(list(answer) == model.tokenize(word),
                    "take the longest vocabulary piece at each position (with ## after the first); one failure makes the word [UNK]")


@answerable
def check_bert_tokens(text: str, answer: Sequence[str]) -> bool:
    """Which tokens does the real BERT uncased vocabulary (bge-small) give ``text``?

    Example:
        >>> from labkit.exercises.wordpiece import check_bert_tokens
        >>> check_bert_tokens("Hello!", ["hello", "!"])
        right
        True
    """
    return _verdict(list(answer) == _bert().encode(text).tokens,
                    "run the basic tokenizer first, then WordPiece on each word")
