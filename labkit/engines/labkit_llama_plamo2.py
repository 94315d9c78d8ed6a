"""labkit's engine for a PLaMo-2 GGUF (``tokenizer.ggml.model = "plamo2"``), exact against llama.cpp.

The algorithm is :mod:`labkit.algorithms.plamo2` (the cheapest cut by integer scores, bytes for
the rest); this class adds what every labkit engine shares (added tokens split off first,
offsets) and llama.cpp's rules for the format: no BOS or EOS is ever added (the reader turns
both flags off: ``labkit.formats.gguf.NEVER_FRAMED``), every one of the
256 byte tokens must exist (llama.cpp refuses the file otherwise), and decoding writes a byte
token's byte and any other token's text. Introduced in notebook ``05_unigram_trie_viterbi``.

Example:
    >>> from labkit.core import VocabData
    >>> from labkit.engines.labkit_llama_plamo2 import Plamo2Tokenizer
    >>> tokens = ["<unk>", *[f"<0x{b:02X}>" for b in range(256)], "ab", "a", "b"]
    >>> vocab = VocabData("toy", "gguf", "plamo2", tokens, [2] + [6] * 256 + [1] * 3, scores=[0.0] * 257 + [-1.5, -1.0, -1.0])
    >>> Plamo2Tokenizer(vocab).encode("abc").tokens
    ['ab', '<0x63>']
"""
from __future__ import annotations

import re

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.llama_spm import join_pieces
from labkit.algorithms.plamo2 import Plamo2Model, plamo2_refusal
from labkit.core import MODEL_PLAMO2, TOKEN_BYTE, TOKEN_CONTROL, TOKEN_UNKNOWN, EngineUnavailable, VocabData
from labkit.engines.base import LabkitTokenizer, SegmentContext

_BYTE_SPELLING = re.compile(r"<0x([0-9A-Fa-f]{2})>")
# longer stretches are cut every time: a cache entry's size stays bounded
CACHED_STRETCH_CHARS = 256


class Plamo2Tokenizer(LabkitTokenizer):
    """A PLaMo-2 vocabulary served as llama.cpp serves it.

    Example:
        >>> from labkit.core import VocabData
        >>> from labkit.engines.labkit_llama_plamo2 import Plamo2Tokenizer
        >>> tokens = ["<unk>", *[f"<0x{b:02X}>" for b in range(256)]]
        >>> Plamo2Tokenizer(VocabData("toy", "gguf", "plamo2", tokens, [2] + [6] * 256)).decode([0x42])
        'A'
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        tokens, types = vocab.tokens, vocab.token_types
        scores = vocab.scores if vocab.scores is not None else [0.0] * len(tokens)
        byte_ids = [0] * 256
        self.byte_value: dict[int, int] = {}
        for index, (spelling, kind) in enumerate(zip(tokens, types)):
            match = _BYTE_SPELLING.fullmatch(spelling) if kind == TOKEN_BYTE else None
            if match:
                byte_ids[int(match.group(1), 16)] = index
                self.byte_value[index] = int(match.group(1), 16)
        missing = [value for value in range(256) if byte_ids[value] == 0]
        if missing:
            # llama.cpp's load throws "Byte token for <0x..> is not set" (an id of 0 counts as unset there)
            raise EngineUnavailable(f"{vocab.name}: no byte token <0x{missing[0]:02X}> of type byte (id > 0): "
                                    "llama.cpp cannot load this PLaMo-2 vocabulary")
        scored = {spelling: (index, float(scores[index])) for index, (spelling, kind) in enumerate(zip(tokens, types))
                  if kind != TOKEN_BYTE}
        refusal = plamo2_refusal({spelling: score for spelling, (_, score) in scored.items()})
        if refusal is not None:
            raise EngineUnavailable(f"{vocab.name}: {refusal}")
        self.model = Plamo2Model(scored, byte_ids)
        self.strip_first_space = bool(vocab.options.get("add_space_prefix", False))
        # token_to_piece: a byte token its byte, any other its text; control and unknown ones hidden unless shown
        self.pieces = [bytes([self.byte_value[i]]) if i in self.byte_value else token.encode("utf-8")
                       for i, token in enumerate(tokens)]
        self.plain_pieces = [b"" if kind in (TOKEN_CONTROL, TOKEN_UNKNOWN) else piece
                             for piece, kind in zip(self.pieces, types)]
        self._cache: dict[str, tuple[tuple[int, int, int], ...]] = BoundedDict()

    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        pieces = self._cache.get(text)
        if pieces is None:
            pieces = tuple(self.model.pieces(text))
            if len(text) <= CACHED_STRETCH_CHARS:
                self._cache[text] = pieces
        return list(pieces)

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        # llama_detokenize with remove_special off: skip_special_tokens is its unparse_special off
        pieces = self.plain_pieces if skip_special_tokens else self.pieces
        return join_pieces(map(pieces.__getitem__, ids), self.strip_first_space).decode("utf-8", "replace")

    def clear_cache(self) -> None:
        """Empty the stretch cache (for cold-cache measurements)."""
        self._cache.clear()


def build(vocab: VocabData) -> Plamo2Tokenizer:
    """Factory entry (``LABKIT_ENGINES["plamo2"]``): a Plamo2Tokenizer over ``vocab``."""
    if vocab.model != MODEL_PLAMO2:
        raise EngineUnavailable(f"{vocab.name}: the PLaMo-2 engine serves model 'plamo2', not {vocab.model!r}")
    return Plamo2Tokenizer(vocab)
