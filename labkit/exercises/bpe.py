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
    right = len(text.encode("utf-8"))
    if answer == len(text):
        hint = f"{answer} is the number of characters (code points); count bytes: ASCII 1, up to U+07FF 2, up to U+FFFF 3, beyond 4"
    elif answer == len(text.encode("utf-16-le")) // 2:
        hint = f"{answer} counts UTF-16 code units (an emoji is a surrogate pair there); UTF-8 writes it in 4 bytes"
    else:
        hint = "count the bytes of each character: ASCII 1, up to U+07FF 2, up to U+FFFF 3, beyond 4"
    return _verdict(answer == right, hint)


@answerable
def check_gpt2_char(byte_value: int, answer: str) -> bool:
    """Which character does GPT-2's map give byte ``byte_value``?

    Example:
        >>> from labkit.exercises.bpe import check_gpt2_char
        >>> check_gpt2_char(0x20, "Ġ")
        right
        True
    """
    right = bytes_to_unicode()[byte_value]
    if isinstance(answer, str) and answer == chr(byte_value):
        hint = (f"byte 0x{byte_value:02X} is not printable, so it does not keep its own character: the moved bytes "
                "take U+0100 onwards, in byte order")
    elif isinstance(answer, str) and len(answer) == 1 and ord(answer) == 0x100 + byte_value and right != answer:
        hint = "not U+0100 + the byte: U+0100 + its rank among the moved bytes (count the moved bytes below it)"
    else:
        hint = "printable Latin-1 bytes keep their character; the others move to U+0100 + their rank among the moved bytes"
    return _verdict(answer == right, hint)


@answerable
def check_gpt2_spelling(text: str, answer: str) -> bool:
    """How does a byte-level vocabulary spell ``text``?

    Example:
        >>> from labkit.exercises.bpe import check_gpt2_spelling
        >>> check_gpt2_spelling(" hi", "Ġhi")
        right
        True
    """
    right = text_to_gpt2(text)
    if not isinstance(answer, str):
        return _verdict(False, f"give the spelling as one str, got {type(answer).__name__}")
    if answer == right:
        return _verdict(True, "")
    at = next((i for i, (a, b) in enumerate(zip(answer, right)) if a != b), min(len(answer), len(right)))
    if len(answer) < len(right) and answer[:at] == right[:at] and at == len(answer):
        where = f"too short: {len(answer)} characters, one per UTF-8 byte makes {len(right)}"
    else:
        where = f"character {at} ({answer[at:at + 1]!r}) is wrong"
    return _verdict(False, f"{where}; spell each UTF-8 byte with bytes_to_unicode() (a non-ASCII letter is 2+ bytes)")


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
