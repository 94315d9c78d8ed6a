"""labkit's own WordPiece engine (bert-bge GGUF, all-MiniLM-L6-v2 tokenizer.json).

Added tokens (``[CLS]``, ``[SEP]``, ...) are split off by the base class; each stretch of
ordinary text then goes through BERT's basic tokenizer
(:class:`labkit.algorithms.bert_basic.BertBasicTokenizer`) and greedy longest-match
WordPiece (:class:`labkit.algorithms.wordpiece.WordPiece`) word by word, with a word cache.
``add_special_tokens=True`` frames the ids as ``[CLS] ... [SEP]``. Padding and truncation
are not applied (the ids are the text's own). Decoding is ``tokenizers``' WordPiece decoder.
Introduced in notebook ``04_wordpiece``.

Example:
    >>> import labkit
    >>> labkit.load("bert-bge", engine="labkit").encode("unaffable").tokens
    ['una', '##ffa', '##ble']
"""
from __future__ import annotations

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.bert_basic import BertBasicTokenizer
from labkit.algorithms.wordpiece import WordPiece, decode_wordpiece
from labkit.core import MODEL_WORDPIECE, EngineUnavailable, LabkitError, VocabData, hole_ids
from labkit.engines.base import LabkitTokenizer, SegmentContext



class WordPieceTokenizer(LabkitTokenizer):
    """BERT WordPiece in pure Python, exact against ``tokenizers``.

    Example:
        >>> from labkit.engines.labkit_wordpiece import WordPieceTokenizer
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> WordPieceTokenizer(read_gguf(bundled_path("bert-bge"))).encode("Hello, world!").tokens
        ['hello', ',', 'world', '!']
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        self.basic = BertBasicTokenizer.from_vocab(vocab)
        try:
            self.model = WordPiece.from_vocab(vocab)
        except LabkitError as exc:
            raise LabkitError(f"{vocab.name}: {exc}") from None
        decoder = vocab.metadata.get("decoder") if isinstance(vocab.metadata, dict) else None
        self.cleanup = bool(decoder.get("cleanup", True)) if isinstance(decoder, dict) else True
        self._cache: dict[str, tuple[tuple[int, int, int], ...]] = BoundedDict()
        self._holes = hole_ids(vocab)

    def clear_cache(self) -> None:
        """Forget every cached word (for timing the cold path).

        Example (a cold encode gives the warm one's pieces):
            >>> import labkit
            >>> tok = labkit.load("minilm", engine="labkit")
            >>> warm = tok.encode("tokenization").tokens
            >>> tok.clear_cache(); tok.encode("tokenization").tokens == warm == ["token", "##ization"]
            True
        """
        self._cache.clear()

    def _word(self, word: str) -> tuple[tuple[int, int, int], ...]:
        spans = self._cache.get(word)
        if spans is None:
            try:
                spans = tuple(self.model.tokenize_word(word))
            except LabkitError as exc:  # a word with no pieces and no unknown token: name the file
                raise LabkitError(f"{self.vocab.name}: {exc}") from None
            self._cache[word] = spans
        return spans

    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        normalized, align = self.basic.normalize_with_alignment(text)
        out: list[tuple[int, int, int]] = []
        append = out.append
        cache = self._cache
        for match in self.basic.word_pattern.finditer(normalized):
            word = match.group()
            spans = cache.get(word)
            if spans is None:
                spans = self._word(word)
            base = match.start()
            if align is None:
                for token_id, s, e in spans:
                    append((token_id, base + s, base + e))
            else:
                for token_id, s, e in spans:
                    # the original span of the piece's first and last normalised characters
                    append((token_id, align[base + s], align[base + e - 1] + 1))
        return out

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with no added-token matching and no [CLS]/[SEP] (a fast path).

        Example:
            >>> import labkit
            >>> labkit.load("bert-bge", engine="labkit").encode_ordinary("Hello world")
            [7592, 2088]
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode_ordinary() takes str, got {type(text).__name__}")
        return self._segment_ids(text, None)

    def _segment_ids(self, text: str, context: SegmentContext | None) -> list[int]:
        # the ids-only path: an Encoding's offsets are then worked out only when read
        normalized, _ = self.basic.normalize_with_alignment(text)
        cache = self._cache
        word_of = self._word
        out: list[int] = []
        extend = out.extend
        for word in self.basic.word_pattern.findall(normalized):
            spans = cache.get(word)
            if spans is None:
                spans = word_of(word)
            extend([s[0] for s in spans])
        return out

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        if skip_special_tokens:
            ids = self._drop_special(ids)
        if self._holes:  # an id the file skips has no token in tokenizers: decode drops it
            ids = [i for i in ids if i not in self._holes]
        tokens = self.vocab.tokens
        return decode_wordpiece([tokens[i] for i in ids], prefix=self.model.prefix, cleanup=self.cleanup)


def build(vocab: VocabData) -> WordPieceTokenizer:
    """Build labkit's WordPiece engine; EngineUnavailable for other models.

    Example:
        >>> from labkit.engines.labkit_wordpiece import build
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> build(read_gguf(bundled_path("bert-bge"))).engine
        'labkit'
    """
    if vocab.model != MODEL_WORDPIECE:
        raise EngineUnavailable(f"{vocab.name}: labkit's wordpiece engine serves WordPiece, not {vocab.model!r}")
    if vocab.format == "hf_json":
        _check_bert_pipeline(vocab)
    return WordPieceTokenizer(vocab)


def _component_types(node) -> list:
    """The component types of a tokenizer.json normalizer/pre-tokenizer/decoder (Sequence unrolled)."""
    if node is None:
        return []
    if not isinstance(node, dict):
        return ["?"]
    for key in ("normalizers", "pretokenizers", "decoders"):
        if isinstance(node.get(key), list):
            return [t for child in node[key] for t in _component_types(child)]
    return [node.get("type")]


def _check_bert_pipeline(vocab: VocabData) -> None:
    """labkit implements BERT's pipeline only: anything else in a tokenizer.json is left to tokenizers."""
    meta = vocab.metadata if isinstance(vocab.metadata, dict) else {}
    wanted = {"normalizer": ["BertNormalizer"], "pre_tokenizer": ["BertPreTokenizer"], "decoder": ["WordPiece"]}
    for key, types in wanted.items():
        got = _component_types(meta.get(key))
        if got != types:
            raise EngineUnavailable(
                f"{vocab.name}: labkit's WordPiece engine runs BERT's pipeline ({key} {types}), this file has {key} {got}"
            )
