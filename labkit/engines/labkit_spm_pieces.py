"""labkit's engine for SentencePiece char and word models (``model_type=char|word``).

Everything but the model step is SentencePiece BPE's (:class:`~labkit.engines.labkit_spm_bpe.SpmBpeTokenizer`):
the normaliser with its dummy prefix, user-defined pieces copied through it, offsets through
its alignment, decoding. The model step only cuts and looks up (:mod:`labkit.algorithms.spm_pieces`):
characters, or words at each ``▁``; a symbol no ordinary piece spells is unknown (bytes with
byte fallback, else ``<unk>``, neighbouring unknowns fused, across words too, so the whole
stretch is looked up at once: a lookup per symbol costs less than a cache would).
Introduced in notebook ``03_bpe_sentencepiece``.

Example (a char model trained on botchan, in a temporary folder):
    >>> import labkit, tempfile, pathlib
    >>> from labkit.conformance.spm_matrix import train_model
    >>> path = train_model("char", pathlib.Path(tempfile.mkdtemp()))
    >>> labkit.load(path, engine="labkit").encode("a b").tokens
    ['▁', 'a', '▁', 'b']
"""
from __future__ import annotations

from labkit.algorithms.spm_offsets import sentencepiece_offsets
from labkit.algorithms.spm_pieces import characters, words
from labkit.core import MODEL_SPM_CHAR, MODEL_SPM_WORD, EngineUnavailable, VocabData
from labkit.engines.base import SegmentContext
from labkit.engines.labkit_spm_bpe import SpmBpeTokenizer


class SpmPiecesTokenizer(SpmBpeTokenizer):
    """A SentencePiece char or word model, exact against sentencepiece.

    Example (a word model trained on botchan: two words it never kept are one ``<unk>``):
        >>> import labkit, tempfile, pathlib
        >>> from labkit.conformance.spm_matrix import train_model
        >>> tok = labkit.load(train_model("word", pathlib.Path(tempfile.mkdtemp())), engine="labkit")
        >>> isinstance(tok, SpmPiecesTokenizer), tok.encode("the xyzzy frob").tokens
        (True, ['▁the', '<unk>'])
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        self.kind = "word" if vocab.model == MODEL_SPM_WORD else "char"

    def _symbols(self, normalized: str) -> list[str]:
        """A normalised stretch cut as the model cuts it: words, or characters."""
        return words(normalized) if self.kind == "word" else characters(normalized, self.model.user_defined)

    def _normalized(self, text: str, context: SegmentContext, *, aligned: bool):
        # the dummy prefix belongs to the text start and to text right after an added token
        normalizer = self.normalizer if context.at_text_start or context.after_added else self._plain_normalizer
        return normalizer.normalize_with_alignment(text) if aligned else normalizer.normalize(text)

    # symbols are looked up as BPE's leftover symbols are (SpmBpeModel.symbol_to_id: normal and
    # user-defined pieces only; measured against sentencepiece 0.2.3)
    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        normalized, align = self._normalized(text, context, aligned=True)
        if not normalized:
            return []
        return sentencepiece_offsets(self.model.pieces_to_ids(self._symbols(normalized)), align)

    def _segment_ids(self, text: str, context: SegmentContext) -> list[int]:
        # ids only (no span per token): a 1 MB text costs a list of ids, not of tuples
        normalized = self._normalized(text, context, aligned=False) if text else ""
        return self.model.symbols_to_ids(self._symbols(normalized)) if normalized else []


def build(vocab: VocabData) -> SpmPiecesTokenizer:
    """labkit's engine for a SentencePiece char or word model; EngineUnavailable for others.

    Example:
        >>> import labkit
        >>> build(labkit.load("botchan-bpe").vocab)
        Traceback (most recent call last):
        ...
        labkit.core.EngineUnavailable: botchan_en_bpe_1000.model: labkit's spm_pieces engine serves SentencePiece char and word models, not 'spm_bpe'
    """
    if vocab.model not in (MODEL_SPM_CHAR, MODEL_SPM_WORD):
        raise EngineUnavailable(f"{vocab.name}: labkit's spm_pieces engine serves SentencePiece char and word models, "
                                f"not {vocab.model!r}")
    return SpmPiecesTokenizer(vocab)
