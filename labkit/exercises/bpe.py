"""Checkers for the "Try it" exercises of notebooks 01 (bytes and unicode) and 02 (byte-level BPE).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint, and returns True/False.
Introduced in notebooks ``01_bytes_and_unicode`` and ``02_bpe_byte_level``.

Example:
    >>> from labkit.exercises.bpe import check_gpt2_spelling
    >>> check_gpt2_spelling(" hi", "Ġhi")
    right
    True
"""
from __future__ import annotations

from typing import Mapping, Sequence

from labkit.algorithms.bpe import bpe_heap, byte_parts, pair_ranker
from labkit.algorithms.bpe_train import train_bpe
from labkit.algorithms.bytes_unicode import bytes_to_unicode, text_to_gpt2
from labkit.algorithms.pretokenize import pretokenize
from labkit.exercises import answerable, verdict as _verdict


@answerable
def check_utf8_length(text: str, answer: int) -> bool:
    """How many UTF-8 bytes does ``text`` take?

    Example:
        >>> from labkit.exercises.bpe import check_utf8_length
        >>> check_utf8_length("é", 2)
        right
        True
    """
    return _verdict(answer == len(text.encode("utf-8")),
                    "count the bytes of each character: ASCII 1, up to U+07FF 2, up to U+FFFF 3, beyond 4")


@answerable
def check_gpt2_char(byte_value: int, answer: str) -> bool:
    """Which character does GPT-2's map give byte ``byte_value``?

    Example:
        >>> from labkit.exercises.bpe import check_gpt2_char
        >>> check_gpt2_char(0x20, "Ġ")
        right
        True
    """
    return _verdict(answer == bytes_to_unicode()[byte_value],
                    "printable Latin-1 bytes keep their character; the others move to U+0100 + their rank among the moved bytes")


@answerable
def check_gpt2_spelling(text: str, answer: str) -> bool:
    """How does a byte-level vocabulary spell ``text``?

    Example:
        >>> from labkit.exercises.bpe import check_gpt2_spelling
        >>> check_gpt2_spelling(" hi", "Ġhi")
        right
        True
    """
    return _verdict(answer == text_to_gpt2(text), "spell each UTF-8 byte with bytes_to_unicode()")


@answerable
def check_pretokens(text: str, pre: str, answer: Sequence[str]) -> bool:
    """What pre-tokens does model ``pre`` cut ``text`` into?

    Example:
        >>> from labkit.exercises.bpe import check_pretokens
        >>> check_pretokens("a 12", "qwen2", ["a", " ", "1", "2"])
        right
        True
    """
    return _verdict(list(answer) == pretokenize(text, pre),
                    "read the pattern alternatives left to right: contractions, words, digits, punctuation, spaces")


@answerable
def check_bpe(word: bytes, ranks: Mapping[tuple[bytes, bytes], int], answer: Sequence[bytes]) -> bool:
    """What parts does rank BPE leave for ``word`` given merge ``ranks``?

    Example:
        >>> from labkit.exercises.bpe import check_bpe
        >>> check_bpe(b"low", {(b"l", b"o"): 0}, [b"lo", b"w"])
        right
        True
    """
    expected = bpe_heap(byte_parts(word), pair_ranker(ranks))
    return _verdict(list(answer) == expected, "merge the lowest-rank adjacent pair, leftmost first, until none applies")


@answerable
def check_first_merges(texts: Sequence[str], answer: Sequence[tuple[bytes, bytes]]) -> bool:
    """What are the first ``len(answer)`` merges the trainer learns from ``texts``?

    Example:
        >>> from labkit.exercises.bpe import check_first_merges
        >>> check_first_merges(["aaab"], [(b"a", b"a")])
        right
        True
    """
    trained = train_bpe(texts, vocab_size=256 + len(answer))
    return _verdict(list(answer) == trained.merges,
                    "count pairs inside each pre-token (weighted by frequency); ties go to the smaller pair")
