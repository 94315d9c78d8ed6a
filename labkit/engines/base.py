"""What every labkit engine shares: added-token splitting, BOS/EOS framing, offsets.

A labkit engine only says how to encode one stretch of ordinary text
(:meth:`LabkitTokenizer._encode_segment`) and how to decode ids
(:meth:`LabkitTokenizer._decode`); this class does the rest the same way for all of them.
Introduced in notebook ``07_special_tokens_chat_templates`` (splitting before the model).

Example (an engine of one token per character; the base class splits out ``</s>``):
    >>> from labkit.engines.base import LabkitTokenizer
    >>> from labkit.engines.mock import mock_vocab
    >>> class Characters(LabkitTokenizer):
    ...     def _encode_segment(self, text, context):
    ...         ids = {token: i for i, token in enumerate(self.vocab.tokens)}
    ...         return [(ids[c], k, k + 1) for k, c in enumerate(text)]
    >>> encoding = Characters(mock_vocab()).encode("ab</s>")
    >>> encoding.ids, encoding.offsets
    ([74, 75, 2], [(0, 1), (1, 2), (2, 6)])
"""
from __future__ import annotations

from dataclasses import dataclass

from labkit.algorithms.hf_normalize import Piece, unicode_form
from labkit.algorithms.pretokenize import nfc_with_offsets
from labkit.algorithms.specials import AddedTokenSplitter
from labkit.core import TOKEN_CONTROL, Encoding, LabkitError, Tokenizer, VocabData


@dataclass(frozen=True)
class SegmentContext:
    """Where an ordinary-text segment sits, for models whose rules depend on it
    (SentencePiece adds its dummy prefix only at the start of the text or after an added token).

    Example:
        >>> from labkit.engines.base import SegmentContext
        >>> SegmentContext(index=0, after_added=False, at_text_start=True)
        SegmentContext(index=0, after_added=False, at_text_start=True)
    """

    index: int            # position among the segments of this text (added tokens count)
    after_added: bool     # the previous segment was an added token
    at_text_start: bool   # the segment starts at offset 0 of the text


class LabkitTokenizer(Tokenizer):
    """Base class of labkit's own pure-Python engines.

    Example:
        >>> import labkit
        >>> labkit.load("gpt2", engine="labkit").encode("a<|endoftext|>").ids
        [64, 50256]
    """

    engine = "labkit"

    def __init__(self, vocab: VocabData):
        super().__init__(vocab, backend=None)
        # a tokenizer.json's normalized added tokens are matched after the others, as tokenizers does
        self.splitter = AddedTokenSplitter(vocab.added_tokens, normalized_second=vocab.format == "hf_json",
                                           llama_cpp=vocab.format == "gguf")

    # -- to implement --------------------------------------------------------
    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        """Ordinary text -> list of (id, start, end), char offsets relative to ``text``."""
        raise NotImplementedError

    def _segment_ids(self, text: str, context: SegmentContext) -> list[int]:
        """Ordinary text -> ids only. An engine that overrides this (with a path that skips
        offsets) gets Encodings whose offsets are computed only when read."""
        return [token_id for token_id, _, _ in self._encode_segment(text, context)]

    # -- shared pipeline -------------------------------------------------------
    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        if type(self)._segment_ids is LabkitTokenizer._segment_ids:
            return self._encode_eagerly(text, add_special_tokens, parse_special)
        segments = self.splitter.split(text, parse_special)
        ids: list[int] = []
        after_added = False
        for index, (start, end, added_id) in enumerate(segments):
            if added_id is not None:
                ids.append(added_id)
                after_added = True
                continue
            context = SegmentContext(index=index, after_added=after_added, at_text_start=start == 0)
            ids += self._segment_ids(text[start:end], context)
            after_added = False
        if add_special_tokens:
            ids = self._frame(ids, [], len(text))[0]

        def offsets() -> list[tuple[int, int]]:
            # on first read: the spans pass over the same segments, whose ids must be the ones above
            eager = self._encode_eagerly(text, add_special_tokens, parse_special, segments)
            if eager.ids != ids:
                raise LabkitError(f"{self.name}: the offsets pass gave other ids than the ids pass for {text[:40]!r}")
            return eager.offsets

        tokens = self.vocab.tokens
        return Encoding(ids, lambda: [tokens[i] for i in ids], offsets)

    def _encode_eagerly(self, text: str, add_special_tokens: bool, parse_special: bool, segments=None) -> Encoding:
        """The Encoding with offsets computed now, segment by segment."""
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        after_added = False
        if segments is None:
            segments = self.splitter.split(text, parse_special)
        for index, (start, end, added_id) in enumerate(segments):
            if added_id is not None:
                ids.append(added_id)
                offsets.append((start, end))
                after_added = True
                continue
            context = SegmentContext(index=index, after_added=after_added, at_text_start=start == 0)
            for token_id, s, e in self._encode_segment(text[start:end], context):
                ids.append(token_id)
                offsets.append((start + s, start + e))
            after_added = False
        if add_special_tokens:
            ids, offsets = self._frame(ids, offsets, len(text))
        tokens = self.vocab.tokens
        return Encoding(ids=ids, tokens=[tokens[i] for i in ids], offsets=offsets)

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with no added-token matching and no BOS/EOS (a fast path)."""
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode_ordinary() takes str, got {type(text).__name__}")
        context = SegmentContext(index=0, after_added=False, at_text_start=True)
        return [token_id for token_id, _, _ in self._encode_segment(text, context)] if text else []

    def _frame(self, ids, offsets, text_length):
        """Add BOS/EOS (or [CLS] ... [SEP]) as the model's config says."""
        return frame(self.vocab, ids, offsets, text_length)

    def _drop_special(self, ids: list[int]) -> list[int]:
        """The ids that skip_special_tokens keeps."""
        special = self._special_ids()
        types = self.vocab.token_types
        return [i for i in ids if i not in special and types[i] != TOKEN_CONTROL]


def frame(vocab: VocabData, ids: list[int], offsets: list[tuple[int, int]], text_length: int):
    """``add_special_tokens``: (ids, offsets) with BOS/EOS (or [CLS] ... [SEP]) added as the
    model's config says; the engines that split added tokens themselves all frame this way.

    Example:
        >>> import labkit
        >>> from labkit.engines.base import frame
        >>> frame(labkit.load("llama-spm").vocab, [15043], [(0, 5)], 5)
        ([1, 15043], [(0, 0), (0, 5)])

    Introduced in notebook ``07_special_tokens_chat_templates``.
    """
    sp = vocab.specials
    if vocab.format == "gguf" and ((sp.add_bos and sp.bos_id is None) or (sp.add_eos and sp.eos_id is None)):
        # llama.cpp asserts it has the id it is told to add, and its process ends
        raise LabkitError(f"{vocab.name}: add_special_tokens needs a {'BOS' if sp.add_bos and sp.bos_id is None else 'EOS'} "
                          "id, which this GGUF lacks (llama.cpp ends its process there)")
    if sp.add_cls_sep:
        if sp.cls_id is None or sp.sep_id is None:
            raise LabkitError(f"{vocab.name}: add_special_tokens needs [CLS] and [SEP] ids, which this vocab lacks")
        return [sp.cls_id, *ids, sp.sep_id], [(0, 0), *offsets, (0, 0)]
    if sp.add_bos and sp.bos_id is not None:
        ids, offsets = [sp.bos_id, *ids], [(0, 0), *offsets]
    if sp.add_eos and sp.eos_id is not None:
        # tokenizers' TemplateProcessing gives every special it adds (0, 0)
        end = (0, 0) if vocab.format == "hf_json" else (text_length, text_length)
        ids, offsets = [*ids, sp.eos_id], [*offsets, end]
    return ids, offsets


def applies_nfc(vocab: VocabData, split_nfc: bool) -> bool:
    """Whether a byte-level engine composes the text (NFC) before its split: the file's own
    normaliser decides where the format says (a tokenizer.json always does), else the split's
    table entry (``split_nfc``: GGUF's and .tiktoken's pre names carry it).

    Example:
        >>> from labkit.engines.mock import mock_vocab
        >>> vocab = mock_vocab()
        >>> applies_nfc(vocab, True), (vocab.normalizer.update(nfc=False), applies_nfc(vocab, True))[1]
        (True, False)
    """
    return bool(vocab.normalizer.get("nfc", split_nfc))


def nfc_aligned(text: str, vocab: VocabData) -> tuple[str, list[tuple[int, int]]]:
    """The NFC of ``text`` and, for each of its chars, the (start, end) chars of ``text`` it
    comes from: for a tokenizer.json tokenizers' own alignment (decomposed, reordered, then
    composed char by char), which differs from ``nfc_with_offsets`` where marks are reordered.

    Example:
        >>> from labkit.engines.mock import mock_vocab
        >>> nfc_aligned("e\u0301x", mock_vocab())
        ('éx', [(0, 1), (2, 3)])
    """
    if vocab.format == "hf_json":
        piece = unicode_form(Piece.of(text), "NFC")
        return piece.text, piece.align
    return nfc_with_offsets(text)
