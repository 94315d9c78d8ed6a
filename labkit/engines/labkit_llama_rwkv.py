"""labkit's engine for an RWKV GGUF (``tokenizer.ggml.model = "rwkv"``), exact against llama.cpp.

The algorithm is :mod:`labkit.algorithms.rwkv_trie` (greedy longest match over bytes); this
class adds what every labkit engine shares (added tokens split off first, offsets in
characters) and llama.cpp's rules for the format: no BOS or EOS is ever added (its RWKV
tokenizer has no such step; the reader turns both flags off, ``labkit.formats.gguf.NEVER_FRAMED``),
and decoding writes each token's bytes, control and unknown tokens only when special tokens
are shown. Introduced in notebook ``05_unigram_trie_viterbi``.

Example:
    >>> from labkit.core import VocabData
    >>> from labkit.engines.labkit_llama_rwkv import RwkvTokenizer
    >>> tokens = ["<s>", *[f"\\\\x{b:02x}" for b in range(256)], "ab", "abc"]
    >>> tok = RwkvTokenizer(VocabData("toy", "gguf", "rwkv", tokens, [3] + [1] * 258))
    >>> tok.encode("abcab").ids, tok.decode([257, 258])
    ([258, 257], 'ababc')
"""
from __future__ import annotations

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.rwkv_trie import RwkvMatcher, unescape_rwkv
from labkit.core import MODEL_RWKV, TOKEN_CONTROL, TOKEN_UNKNOWN, EngineUnavailable, VocabData
from labkit.engines.base import LabkitTokenizer, SegmentContext


class RwkvTokenizer(LabkitTokenizer):
    """An RWKV vocabulary served as llama.cpp serves it.

    Example (``é`` is two bytes, each its own token here: the offsets name the character):
        >>> from labkit.core import VocabData
        >>> from labkit.engines.labkit_llama_rwkv import RwkvTokenizer
        >>> tokens = ["<s>", *[f"\\\\x{b:02x}" for b in range(256)]]
        >>> RwkvTokenizer(VocabData("toy", "gguf", "rwkv", tokens, [3] + [1] * 256)).encode("é").offsets
        [(0, 1), (0, 1)]
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        self.token_bytes = [unescape_rwkv(token) for token in vocab.tokens]
        self.matcher = RwkvMatcher(self.token_bytes, vocab.specials.unk_id)
        failure = self.matcher.llama_cpp_failure()
        if failure is not None:
            raise EngineUnavailable(f"{vocab.name}: {failure}; labkit refuses such an RWKV vocabulary")
        self._hidden = {i for i, kind in enumerate(vocab.token_types) if kind in (TOKEN_CONTROL, TOKEN_UNKNOWN)}
        self._cache: dict[str, tuple[tuple[int, int, int], ...]] = BoundedDict()

    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        data = text.encode("utf-8")
        # the character each byte belongs to: a token may end inside a character, as in byte-level BPE
        char_of = [k for k, ch in enumerate(text) for _ in range(len(ch.encode("utf-8")))]
        return [(token, char_of[start], char_of[end - 1] + 1) for token, start, end in self.matcher.pieces(data)]

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        # llama_detokenize with remove_special off: skip_special_tokens is its unparse_special off
        hidden = self._hidden if skip_special_tokens else ()
        return b"".join(self.token_bytes[i] for i in ids if i not in hidden).decode("utf-8", "replace")

    def token_bytes_of(self, index: int) -> bytes:
        """The bytes one id decodes to.

        Example:
            >>> from labkit.core import VocabData
            >>> from labkit.engines.labkit_llama_rwkv import RwkvTokenizer
            >>> tokens = ["<s>", *[f"\\\\x{b:02x}" for b in range(256)]]
            >>> RwkvTokenizer(VocabData("toy", "gguf", "rwkv", tokens, [3] + [1] * 256)).token_bytes_of(0x42)
            b'A'
        """
        (index,) = self._check_ids([index])
        return self.token_bytes[index]


def build(vocab: VocabData) -> RwkvTokenizer:
    """Factory entry (``LABKIT_ENGINES["rwkv"]``): an RwkvTokenizer over ``vocab``."""
    if vocab.model != MODEL_RWKV:
        raise EngineUnavailable(f"{vocab.name}: the RWKV engine serves model 'rwkv', not {vocab.model!r}")
    return RwkvTokenizer(vocab)
