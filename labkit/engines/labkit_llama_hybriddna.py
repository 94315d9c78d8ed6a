"""labkit's engine for llama.cpp's "hybriddna" GGUFs: byte-level BPE, and DNA read six letters at a time.

The reading of DNA between tags is :mod:`labkit.algorithms.dna_kmers`. This engine adds what
the file decides: the three tags' ids (in a file without all three of ``<dna>``, ``</dna>``
and ``<oov>``, llama.cpp runs BPE throughout), the k-mer tokens by spelling, and their
decoding: llama.cpp drops the U+E000 suffix from the tokens after ``<oov>`` when it loads
them, so that they decode to bare letters.

A stretch is text between special tokens: with ``parse_special`` a ``<dna>`` typed control is
a special token of its own, and the sequence after it is ordinary text for BPE.

Introduced in notebook ``11_factory_formats_hub``.
"""
from __future__ import annotations

from labkit.algorithms.bytes_unicode import decode_like_llama_cpp
from labkit.algorithms.dna_kmers import DNA_CLOSE, DNA_OOV, DNA_OPEN, KMER_MARKER, dna_stretches, kmer_cuts
from labkit.core import TOKEN_NORMAL, EngineUnavailable, VocabData
from labkit.engines.base import SegmentContext
from labkit.engines.labkit_bpe_byte import ByteLevelBPE


class HybridDnaBPE(ByteLevelBPE):
    """Byte-level BPE with llama.cpp's DNA k-mers (see the module docstring).

    Example (a toy file: letters, two k-mers and the three tags):
        >>> from labkit.core import VocabData
        >>> tokens = [*"ACGTacgt<>", "<dna>", "</dna>", "<oov>", "ACGTAC\\ue000", "GTAAAA\\ue000"]
        >>> vocab = VocabData("toy", "gguf", "bpe_byte", tokens, [1] * 10 + [3, 3, 3, 1, 1], merges=[],
        ...                   pre="gpt2", options={"dna_kmers": True})
        >>> tok = HybridDnaBPE(vocab)
        >>> tok.encode("ac<dna>acgtacgt</dna>", parse_special=False).ids
        [4, 5, 10, 13, 14, 11]
        >>> tok.decode([13, 14])
        'ACGTACGTAAAA'
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        tokens, types = vocab.tokens, vocab.token_types
        spelled = {token: index for index, token in enumerate(tokens)}  # llama.cpp's text_to_token
        tags = [spelled.get(tag) for tag in (DNA_OPEN, DNA_CLOSE, DNA_OOV)]
        # all three tags or none: without one, llama.cpp runs BPE on the whole text
        self.dna_tags: tuple[int, int, int] | None = None if None in tags else tuple(tags)
        self._kmer_ids = {token.encode("utf-8")[:-len(KMER_MARKER.encode())]: index
                          for index, token in enumerate(tokens) if token.endswith(KMER_MARKER)}
        # the tokens after <oov> lose the suffix at load: they decode to their bare letters
        oov = spelled.get(DNA_OOV)
        erased = [] if oov is None else [index for index in range(oov + 1, len(tokens))
                                         if tokens[index].endswith(KMER_MARKER) and tokens[index] != KMER_MARKER]
        odd = [index for index in erased if types[index] != TOKEN_NORMAL]
        if odd:
            # llama.cpp would then also match such a token in text by its shortened spelling
            raise EngineUnavailable(f"{vocab.name}: the k-mer token {tokens[odd[0]]!r} (id {odd[0]}) is typed "
                                    f"{types[odd[0]]}, not normal; labkit serves hybriddna files whose k-mers are normal")
        for index in erased:
            self.decoded_bytes[index] = decode_like_llama_cpp(tokens[index][:-len(KMER_MARKER)])

    def _kmer_spans(self, sequence: str, start: int) -> list[tuple[int, int, int]]:
        oov = self.dna_tags[2]
        return [(self._kmer_ids.get(kmer, oov), start + a, start + b) for kmer, a, b in kmer_cuts(sequence)]

    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        if self.dna_tags is None:
            return super()._encode_segment(text, context)
        out: list[tuple[int, int, int]] = []
        for kind, start, end in dna_stretches(text):
            if kind == "text":
                out += [(token, start + a, start + b) for token, a, b in super()._encode_segment(text[start:end], context)]
            elif kind == "dna":
                out += self._kmer_spans(text[start:end], start)
            else:
                out.append((self.dna_tags[0] if kind == "open" else self.dna_tags[1], start, end))
        return out

    def _segment_ids(self, text: str, context: SegmentContext | None) -> list[int]:
        if self.dna_tags is None:
            return super()._segment_ids(text, context)
        out: list[int] = []
        for kind, start, end in dna_stretches(text):
            if kind == "text":
                out += super()._segment_ids(text[start:end], context)
            elif kind == "dna":
                out += [token for token, _, _ in self._kmer_spans(text[start:end], start)]
            else:
                out.append(self.dna_tags[0] if kind == "open" else self.dna_tags[1])
        return out


def build(vocab: VocabData) -> HybridDnaBPE:
    """A HybridDnaBPE over a GGUF read with ``dna_kmers`` on (tokenizer model "hybriddna").

    Example:
        >>> from labkit.core import VocabData
        >>> build(VocabData("toy", "gguf", "bpe_byte", ["a"], [1], merges=[], options={"dna_kmers": True})).dna_tags is None
        True
    """
    if not vocab.options.get("dna_kmers"):
        raise EngineUnavailable(f"{vocab.name}: the hybriddna engine serves GGUF files of tokenizer model 'hybriddna'")
    return HybridDnaBPE(vocab)
