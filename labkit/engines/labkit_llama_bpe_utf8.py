"""labkit's engine for a GGUF BPE over raw UTF-8 (Gemma 4, Sarvam, ...), exact against llama.cpp.

The algorithm is :mod:`labkit.algorithms.llama_bpe_utf8`; this class adds what every labkit
engine shares (added tokens split off first, BOS/EOS, offsets) and llama.cpp's decoding. The
byte-level engine's :func:`~labkit.engines.labkit_bpe_byte.build` hands such a file here.
Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.engines.labkit_llama_bpe_utf8 import Utf8BPE
    >>> from labkit.core import VocabData
    >>> vocab = VocabData("toy", "gguf", "bpe_byte", ["▁", "l", "o", "w", "lo", "low", "▁low"], [1] * 7,
    ...                   merges=[("l", "o"), ("lo", "w"), ("▁", "low")], pre="gemma4", options={"byte_encode": False})
    >>> Utf8BPE(vocab).encode("low low").tokens
    ['low', '▁low']
"""
from __future__ import annotations

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.bytes_unicode import decode_like_llama_cpp
from labkit.algorithms.llama_bpe_utf8 import SPACE, UTF8_BPE_RULES, merge_ranks, merge_word, split_words
from labkit.algorithms.llama_spm import byte_of, join_pieces
from labkit.algorithms.llama_wpm import clean_spaces, is_whitespace, to_lower
from labkit.core import (TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_USER_DEFINED, EngineUnavailable,
                         LabkitError, VocabData)
from labkit.engines.base import LabkitTokenizer, SegmentContext

# longer words are merged every time: a cache entry's size stays bounded
CACHED_WORD_CHARS = 256


class Utf8BPE(LabkitTokenizer):
    """A GGUF whose BPE runs over UTF-8 characters (``<0xNN>`` byte tokens), as llama.cpp runs it.

    Example:
        >>> from labkit.core import VocabData
        >>> from labkit.engines.labkit_llama_bpe_utf8 import Utf8BPE
        >>> vocab = VocabData("toy", "gguf", "bpe_byte", ["a", "b", "ab"], [1, 1, 1], merges=[("a", "b")], pre="whitespace")
        >>> Utf8BPE(vocab).encode("ab ba").ids
        [2, 1, 0]
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        if vocab.pre not in UTF8_BPE_RULES:
            raise EngineUnavailable(f"{vocab.name}: the UTF-8 BPE engine serves the splits {', '.join(UTF8_BPE_RULES)}, "
                                    f"not {vocab.pre!r}")
        if vocab.merges is None:
            raise EngineUnavailable(f"{vocab.name}: a BPE GGUF without tokenizer.ggml.merges, which llama.cpp cannot load")
        self.rules = UTF8_BPE_RULES[vocab.pre]
        tokens, types = vocab.tokens, vocab.token_types
        short = [t for t, kind in zip(tokens, types) if kind == TOKEN_BYTE and len(t.encode("utf-8")) < 3]
        if short:
            # llama.cpp reads a byte token's value from its 4th and 5th bytes: a shorter one throws at load
            raise EngineUnavailable(f"{vocab.name}: the byte token {short[0]!r} is shorter than '<0x'; llama.cpp "
                                    "cannot load this file")
        # llama.cpp names a part by its spelling among all tokens, whatever their type
        self.spelling_id = {spelling: i for i, spelling in enumerate(tokens)}
        self.byte_ids = [self.spelling_id.get(f"<0x{value:02X}>") for value in range(256)]
        self.ranks = merge_ranks(vocab.merges)
        self.strip_first_space = bool(vocab.options.get("add_space_prefix", False))
        self.pieces = [self._piece(spelling, kind, special=True) for spelling, kind in zip(tokens, types)]
        self.plain_pieces = [self._piece(spelling, kind, special=False) for spelling, kind in zip(tokens, types)]
        self._cache: dict[str, tuple[tuple[int, int, int], ...]] = BoundedDict()
        # the "whitespace" tokenizer model: every space dropped, each run of the rest merged on its own
        self.drop_whitespace = bool(vocab.options.get("drop_whitespace", False))
        self.lowercase = bool(vocab.options.get("lowercase", False))

    def _piece(self, spelling: str, kind: int, *, special: bool) -> bytes:
        """llama.cpp's ``token_to_piece`` for one token of this vocabulary."""
        if kind in (TOKEN_UNKNOWN, TOKEN_CONTROL):
            return spelling.encode("utf-8") if special else b""
        if kind == TOKEN_USER_DEFINED:
            return spelling.encode("utf-8")
        if kind == TOKEN_NORMAL:
            if self.rules.escape_whitespaces:
                return spelling.replace(SPACE, " ").encode("utf-8")
            return decode_like_llama_cpp(spelling)  # llama_decode_text: the spelling read as byte-level text
        if kind == TOKEN_BYTE:
            return bytes([byte_of(spelling)])
        return b""  # unused

    def word_pieces(self, word: str) -> tuple[tuple[int, int, int], ...]:
        """One word's (id, start, end) chars, no cache.

        Example (the part ``▁x`` is no token: its bytes' tokens, of which only ``<0xE2>`` exists):
            >>> from labkit.core import VocabData
            >>> from labkit.engines.labkit_llama_bpe_utf8 import Utf8BPE
            >>> vocab = VocabData("toy", "gguf", "bpe_byte", ["x", "<0xE2>", "▁", "y"], [1, 6, 1, 1],
            ...                   merges=[("▁", "x")], pre="gemma4", options={"byte_encode": False})
            >>> Utf8BPE(vocab).word_pieces("y▁x")
            ((3, 0, 1), (1, 1, 2))
        """
        if self.rules.gemma4 and word.strip("\n") == "" and word in self.spelling_id:
            return ((self.spelling_id[word], 0, len(word)),)
        if " " in word and len(word) > 1:
            # llama.cpp asserts that no merge half it looks up holds a space (find_bpe_rank)
            raise LabkitError(f"{self.name}: the word {word[:40]!r} holds a space beside other characters; llama.cpp "
                              "ends its process there (a space in a merge half)")
        out: list[tuple[int, int, int]] = []
        start = 0
        for part in merge_word(word, self.ranks):
            end = start + len(part)
            token = self.spelling_id.get(part)
            if token is not None:
                out.append((token, start, end))
            else:  # each byte's <0xNN> token, on the char it belongs to; a byte with none is dropped
                for offset, ch in enumerate(part, start):
                    out.extend((self.byte_ids[value], offset, offset + 1) for value in ch.encode("utf-8")
                               if self.byte_ids[value] is not None)
            start = end
        return tuple(out)

    def clear_cache(self) -> None:
        """Empty the word cache (for cold-cache measurements)."""
        self._cache.clear()

    # -- LabkitTokenizer -----------------------------------------------------
    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        if self.drop_whitespace:
            return self._encode_without_spaces(text)
        if self.rules.escape_whitespaces:
            text = text.replace(" ", SPACE)  # one char for one: offsets stay those of the text
        out: list[tuple[int, int, int]] = []
        position = 0
        for word in split_words(text, self.rules):
            out.extend((token, position + start, position + end) for token, start, end in self._cached_pieces(word))
            position += len(word)
        return out

    def _cached_pieces(self, word: str) -> tuple[tuple[int, int, int], ...]:
        pieces = self._cache.get(word)
        if pieces is None:
            pieces = self.word_pieces(word)
            if len(word) <= CACHED_WORD_CHARS:
                self._cache[word] = pieces
        return pieces

    def _encode_without_spaces(self, text: str) -> list[tuple[int, int, int]]:
        """llama.cpp's "whitespace" session: runs of characters that are not its whitespace,
        each lowercased char by char where the file says (one code point for one: offsets
        stay), each merged as one word."""
        out: list[tuple[int, int, int]] = []
        start = 0
        for end in range(len(text) + 1):
            if end < len(text) and not is_whitespace(ord(text[end])):
                continue
            if end > start:
                run = text[start:end]
                if self.lowercase:
                    run = "".join(chr(to_lower(ord(ch))) for ch in run)
                out.extend((token, start + s, start + e) for token, s, e in self._cached_pieces(run))
            start = end + 1
        return out

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        # llama_detokenize with remove_special off: skip_special_tokens is its unparse_special off
        pieces = self.plain_pieces if skip_special_tokens else self.pieces
        data = join_pieces(map(pieces.__getitem__, ids), self.strip_first_space)
        if self.rules.clean_spaces:
            data = clean_spaces(data)
        return data.decode("utf-8", "replace")

    def unsettled_tail(self, text: str) -> bool:
        """Whether the next token can still rewrite the end of ``text`` (clean_spaces): a stream holds it.

        Example:
            >>> from labkit.core import VocabData
            >>> from labkit.engines.labkit_llama_bpe_utf8 import Utf8BPE
            >>> tok = Utf8BPE(VocabData("toy", "gguf", "bpe_byte", ["a"], [1], merges=[], pre="gemma4"))
            >>> tok.unsettled_tail("it '"), tok.unsettled_tail("it's")
            (True, False)
        """
        return self.rules.clean_spaces and text.endswith((" ", " '", " 'r", " 'v"))


def build(vocab: VocabData) -> Utf8BPE:
    """Factory entry (through the byte-level engine's ``build``): a Utf8BPE over ``vocab``."""
    if vocab.format != "gguf" or vocab.options.get("byte_encode", True):
        raise EngineUnavailable(f"{vocab.name}: the UTF-8 BPE engine serves GGUF files read with byte_encode off")
    return Utf8BPE(vocab)
