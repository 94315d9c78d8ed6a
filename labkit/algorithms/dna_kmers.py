"""llama.cpp's "hybriddna" reading of DNA: between ``<dna>`` and ``</dna>``, six letters a token.

HybridDNA (a DNA language model) keeps its base model's byte-level BPE for text and reads a
DNA sequence written between ``<dna>`` and ``</dna>`` as k-mers of six letters. On each stretch
of raw text, llama.cpp (``llm_tokenizer_hybriddna_session`` in llama-vocab.cpp):

* runs byte-level BPE on the text outside the tags (:func:`dna_stretches` finds them);
* gives ``<dna>`` and ``</dna>`` their tokens, and reads what lies between them (to the end of
  the stretch when no ``</dna>`` follows) upper-cased (ASCII a-z only) and cut every six
  bytes, a short last k-mer filled up with ``A`` (:func:`kmer_cuts`);
* gives each k-mer the token spelled k-mer + U+E000 (:data:`KMER_MARKER`, the suffix its
  converter adds so that the k-mer ``CCCCCC`` and the BPE token ``CCCCCC`` keep ids of their
  own), or ``<oov>`` where there is none (a cut through a character's UTF-8 bytes included).

The engine is :class:`labkit.engines.labkit_llama_hybriddna.HybridDnaBPE`. Introduced in
notebook ``11_factory_formats_hub``.

Example:
    >>> from labkit.algorithms.dna_kmers import dna_stretches
    >>> dna_stretches("hi <dna>acgtac</dna>!")
    [('text', 0, 3), ('open', 3, 8), ('dna', 8, 14), ('close', 14, 20), ('text', 20, 21)]
"""
from __future__ import annotations

from labkit.algorithms.bytes_unicode import char_spans

DNA_OPEN, DNA_CLOSE, DNA_OOV = "<dna>", "</dna>", "<oov>"
# the suffix the converter puts on each k-mer token (a private-use character)
KMER_MARKER = "\ue000"
KMER_BYTES = 6


def dna_stretches(text: str) -> list[tuple[str, int, int]]:
    """``text`` as llama.cpp's hybriddna session walks it: (kind, start, end) character spans,
    kind one of "text" (for BPE), "open", "dna" (the sequence, maybe empty) and "close".

    Example (no ``</dna>``: the sequence runs to the end):
        >>> dna_stretches("<dna>ac")
        [('open', 0, 5), ('dna', 5, 7)]
    """
    out: list[tuple[str, int, int]] = []
    position, size = 0, len(text)
    while position < size:
        start = text.find(DNA_OPEN, position)
        if start < 0:
            out.append(("text", position, size))
            break
        if start > position:
            out.append(("text", position, start))
        content = start + len(DNA_OPEN)
        out.append(("open", start, content))
        end = text.find(DNA_CLOSE, content)
        out.append(("dna", content, size if end < 0 else end))
        if end < 0:
            break
        out.append(("close", end, end + len(DNA_CLOSE)))
        position = end + len(DNA_CLOSE)
    return out


def kmer_cuts(sequence: str) -> list[tuple[bytes, int, int]]:
    """The k-mers of a DNA stretch, each with the characters its bytes fall in: (k-mer bytes,
    start, end). Upper-cased ASCII only; a short last k-mer is filled up with ``A``.

    Example:
        >>> kmer_cuts("acgtacGT")
        [(b'ACGTAC', 0, 6), (b'GTAAAA', 6, 8)]
    """
    data = sequence.encode("utf-8").upper()  # bytes.upper changes ASCII a-z only, as llama.cpp does
    starts = range(0, len(data), KMER_BYTES)
    spans = char_spans(sequence, [min(KMER_BYTES, len(data) - start) for start in starts])
    return [(data[start:start + KMER_BYTES].ljust(KMER_BYTES, b"A"), *span) for start, span in zip(starts, spans)]
