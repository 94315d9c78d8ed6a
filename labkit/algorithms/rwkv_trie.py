"""RWKV's "world" tokenizer as llama.cpp runs it: the longest token at each byte, nothing else.

An RWKV vocabulary is a list of byte strings. A GGUF stores each one escaped as Python writes a
bytes literal (``repr(token)[2:-1]``: ``\\xff``, ``\\n``, ``\\'``), and llama.cpp
(``src/llama-vocab.cpp``: ``llama_unescape_rwkv_token``, ``llm_tokenizer_rwkv``) reads them
back into a trie of bytes. Encoding walks that trie from the current byte as far as the text
follows it and takes the longest token met on the way (greedy longest match: no merges, no
scores, no lattice); decoding writes each token's bytes.

Two of llama.cpp's details are kept exactly:

* the escape reader takes ``\\xNN`` with lower-case hex digits; an upper-case digit reads as
  ``c - '0'`` there (``\\xFF`` is not 0xFF), and a later token with the same bytes replaces
  an earlier one in the trie;
* a byte that starts no token gives the unknown id; a byte that starts a longer token but is
  no token itself, where no longer token matches, sends llama.cpp back to the start of the
  text forever. labkit refuses such a vocabulary at load
  (:func:`RwkvMatcher.llama_cpp_failure`).

Introduced in notebook ``05_unigram_trie_viterbi`` (the trie; greedy longest match).

Example:
    >>> from labkit.algorithms.rwkv_trie import RwkvMatcher, unescape_rwkv
    >>> unescape_rwkv(r"a\\x41\\n"), unescape_rwkv(r"\\xFF")
    (b'aA\\n', b'v')
    >>> RwkvMatcher([b"a", b"b", b"ab", b"abc"]).pieces(b"abcab")
    [(3, 0, 3), (2, 3, 5)]
"""
from __future__ import annotations

from typing import Sequence

_SIMPLE_ESCAPES = {ord("t"): 9, ord("n"): 10, ord("r"): 13}


def unescape_rwkv(escaped: str) -> bytes:
    r"""The bytes llama.cpp reads from one escaped RWKV token (``llama_unescape_rwkv_token``):
    ``\t \n \r``, ``\xNN`` (each hex digit read as ``c - 'a' + 10`` from ``a`` on, else
    ``c - '0'``, on signed chars, kept to 8 bits), any other escaped byte as itself.

    Example:
        >>> unescape_rwkv(r"\'\\"), unescape_rwkv(r"\x0a\x")
        (b"'\\", b'\n')
    """
    out = bytearray()
    escaping, hex_left, acc = False, 0, 0
    for value in escaped.encode("utf-8"):
        if hex_left:
            signed = value - 256 if value > 127 else value  # C's char is signed here
            digit = signed - ord("a") + 10 if signed >= ord("a") else signed - ord("0")
            acc = ((acc << 4) + digit) & 0xFF
            hex_left -= 1
            if not hex_left:
                out.append(acc)
                acc = 0
        elif escaping:
            escaping = False
            if value == ord("x"):
                hex_left = 2
            else:
                out.append(_SIMPLE_ESCAPES.get(value, value))
        elif value == ord("\\"):
            escaping = True
        else:
            out.append(value)
    return bytes(out)


class RwkvMatcher:
    """The trie of token bytes, kept as a dict of tokens and the set of their prefixes.

    Example:
        >>> RwkvMatcher([b"x", b"xy"]).pieces(b"xyx")
        [(1, 0, 2), (0, 2, 3)]
    """

    def __init__(self, token_bytes: Sequence[bytes], unknown_id: int | None = None):
        self.token_id: dict[bytes, int] = {}
        self.prefixes: set[bytes] = set()
        for index, data in enumerate(token_bytes):
            if data:
                self.token_id[data] = index  # a later token with the same bytes wins, as in llama.cpp's trie
                self.prefixes.update(data[:k] for k in range(1, len(data) + 1))
        self.unknown_id = unknown_id
        self.longest = max(map(len, self.token_id), default=0)

    def llama_cpp_failure(self) -> str | None:
        """Why llama.cpp cannot tokenize every text with this vocabulary, or None: a byte that
        starts no token while there is no unknown id (llama.cpp writes -1), or a byte that
        starts a longer token without being one (llama.cpp loops forever when no longer token
        matches there).

        Example:
            >>> RwkvMatcher([b"ab"], unknown_id=0).llama_cpp_failure()[:23]
            'the byte 0x61 starts th'
        """
        for value in range(256):
            single = bytes([value])
            if single in self.token_id:
                continue
            if single in self.prefixes:
                return (f"the byte 0x{value:02X} starts the token {self._first_with(single)!r} but is no token: "
                        "llama.cpp loops forever where no longer token matches there")
            if self.unknown_id is None:
                return f"the byte 0x{value:02X} starts no token and there is no unknown id (llama.cpp writes id -1)"
        return None

    def _first_with(self, start: bytes) -> bytes:
        return min((data for data in self.token_id if data.startswith(start)), key=len)

    def pieces(self, data: bytes) -> list[tuple[int, int, int]]:
        """(id, start, end) bytes: at each position the longest token the text starts with, or
        the unknown id for one byte that starts none.

        Example:
            >>> RwkvMatcher([b"a"], unknown_id=7).pieces(b"aza")
            [(0, 0, 1), (7, 1, 2), (0, 2, 3)]
        """
        out: list[tuple[int, int, int]] = []
        position, n = 0, len(data)
        prefixes, token_id = self.prefixes, self.token_id
        while position < n:
            best = None
            end = position + 1
            # walk the trie: every longer prefix the text follows, the last token met is the match
            while end <= n and data[position:end] in prefixes:
                if data[position:end] in token_id:
                    best = end
                end += 1
            if best is None:
                out.append((self.unknown_id, position, position + 1))
                position += 1
                continue
            out.append((token_id[data[position:best]], position, best))
            position = best
        return out
