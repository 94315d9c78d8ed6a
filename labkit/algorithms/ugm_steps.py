"""The steps of llama.cpp's t5 lattice: one code point at a time over normalised *bytes*.

llama.cpp's ``llm_tokenizer_ugm_session::tokenize`` walks the normalised text as bytes and
reads each step's length from the lead byte alone (``unicode_len_utf8``: 1 below 0xC0, 2 for
0xC0-0xDF, 3 for 0xE0-0xEF, 4 above). On valid UTF-8 a step is a character, so labkit's str
lattice is the same lattice. But its normaliser can split a character: the user-defined
symbols' trie copies as many bytes as it can walk, and a text char that shares its lead byte
with a different char of a symbol stops the walk inside itself
(:meth:`labkit.algorithms.charsmap.SpmNormalizer.may_split_chars`). The copied lead byte then
swallows the start of what follows (the U+FFFD written for each stray byte), and what is left
of that is stepped over one byte at a time.

No token can match such a step: a GGUF token's text is valid UTF-8 (the reader refuses any
other), and a token starting there would have to begin with those very bytes. So each step
that is not one valid character becomes one :data:`UNMATCHABLE` char, and the str lattice runs
unchanged on the result: one step is one char, an unknown step costs the unknown score once,
and neighbouring unknowns fuse, as in llama.cpp.
Introduced in notebook ``05_unigram_trie_viterbi`` (§ "When llama.cpp splits a character").

Example:
    >>> from labkit.algorithms.ugm_steps import steps
    >>> text, starts = steps("▁caf".encode() + b"\\xc3" + "\\ufffd".encode())
    >>> text, list(starts)
    ('▁caf\\udc80\\udc80\\udc80', [0, 3, 4, 5, 6, 8, 9, 10])
"""
from __future__ import annotations

import re
from array import array

UNMATCHABLE = "\udc80"  # a lone surrogate: no token text (valid UTF-8) contains one

# bytes of llama.cpp's step starting with a lead byte, indexed by its high four bits
_STEP_BYTES = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)

# a run of valid UTF-8 characters (no overlongs, no surrogates, nothing past U+10FFFF)
_VALID_RUN = re.compile(
    rb"(?:[\x00-\x7f]|[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2})+"
)


def step_bytes(lead: int) -> int:
    """How many bytes llama.cpp's lattice takes for the step starting with byte ``lead``.

    Example:
        >>> [step_bytes(b) for b in b"a\\xa9\\xc3\\xe2\\xf0"]
        [1, 1, 2, 3, 4]
    """
    return _STEP_BYTES[lead >> 4]


def steps(data: bytes) -> tuple[str, array]:
    """``data`` as llama.cpp's lattice steps through it: (text, starts), one char of ``text``
    per step (the character itself, or :data:`UNMATCHABLE`), ``starts[k]`` the byte offset of
    step ``k`` and ``starts[-1] == len(data)``.

    Example:
        >>> text, starts = steps("añ".encode())
        >>> text, list(starts)
        ('añ', [0, 1, 3])
    """
    chars: list[str] = []
    starts = array("q")  # one machine int per step
    pos, end = 0, len(data)
    while pos < end:
        run = _VALID_RUN.match(data, pos)
        if run is not None:
            text = run.group().decode("utf-8")
            chars.append(text)
            for ch in text:
                starts.append(pos)
                pos += 1 if ch < "\x80" else len(ch.encode("utf-8"))
            continue
        # not a valid character here: one step, as long as its first byte says
        starts.append(pos)
        chars.append(UNMATCHABLE)
        pos += min(_STEP_BYTES[data[pos] >> 4], end - pos)
    starts.append(end)
    return "".join(chars), starts
