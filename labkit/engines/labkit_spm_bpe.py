"""labkit's own SentencePiece BPE engine (llama-spm GGUF, phi-3-style GGUF, BPE ``.model``).

The pipeline for one stretch of ordinary text (added tokens are split off by the base class):

1. SentencePiece normalisation (:class:`labkit.algorithms.charsmap.SpmNormalizer`): the
   charsmap, whitespace rules, the dummy prefix ``▁`` and ``' '`` -> ``▁``. The dummy prefix
   is added at the start of the text and again after every added token, which is what
   llama.cpp (``is_prev_special``) and the ``tokenizers`` pipeline (a ``Prepend`` normaliser
   runs on each segment) both do.
2. Cut the normalised text into words that no piece of the vocabulary crosses (before each
   run of ``▁`` for llama), and run score BPE (:mod:`labkit.algorithms.spm_bpe`) on each,
   with a word cache: the result of a word never depends on its neighbours.
3. Map normalised offsets back to the text's characters.

Decoding follows the file's reference: GGUF and tokenizer.json decode like ``tokenizers``
(``<unk>`` spelled out, a run of byte pieces that is not valid UTF-8 gives one U+FFFD per
byte), a SentencePiece ``.model`` like ``sentencepiece`` (``<unk>`` reads `` ⁇ ``, each
malformed byte one U+FFFD). Both strip the one space the dummy prefix added.
Introduced in notebook ``03_bpe_sentencepiece``.

Example: ``labkit.load("llama-spm", engine="labkit").encode(" Hello").ids`` -> ``[29871, 15043]``
"""
from __future__ import annotations

import re

from labkit.algorithms.charsmap import SpmNormalizer
from labkit.algorithms.spm_bpe import SPACE, SpmBpeModel, chunk_rule, parse_byte_piece
from labkit.core import (
    MODEL_SPM_BPE,
    TOKEN_BYTE,
    TOKEN_CONTROL,
    TOKEN_UNKNOWN,
    EngineUnavailable,
    LabkitError,
    VocabData,
)
from labkit.engines.base import LabkitTokenizer, SegmentContext

_CACHE_LIMIT = 200_000  # words kept before the cache is emptied and refilled
_CHUNKS = {
    "prefix": re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+"),
    "suffix": re.compile(f"[^{SPACE}]+{SPACE}*|{SPACE}+"),
}
DECODE_STYLES = ("hf", "sentencepiece")


class SpmBpeTokenizer(LabkitTokenizer):
    """SentencePiece score BPE in pure Python, exact against sentencepiece and tokenizers.

    Example: ``SpmBpeTokenizer(read_gguf(bundled_path("llama-spm"))).encode("Hello world").tokens`` -> ``['▁Hello', '▁world']``
    """

    def __init__(self, vocab: VocabData, *, decode_style: str | None = None):
        super().__init__(vocab)
        self.model = SpmBpeModel.from_vocab(vocab)
        norm = vocab.normalizer or {}
        self.add_dummy_prefix = bool(norm.get("add_dummy_prefix", True))
        self.suffix = bool(norm.get("treat_whitespace_as_suffix", False))
        settings = dict(
            remove_extra_whitespaces=norm.get("remove_extra_whitespaces", False),
            escape_whitespaces=norm.get("escape_whitespaces", True),
            treat_whitespace_as_suffix=self.suffix,
        )
        # user-defined pieces never reach the normaliser: the added-token splitter took them
        self.normalizer = SpmNormalizer(norm.get("charsmap"), add_dummy_prefix=self.add_dummy_prefix, **settings)
        self._plain_normalizer = SpmNormalizer(norm.get("charsmap"), add_dummy_prefix=False, **settings)
        rule = chunk_rule(vocab.tokens, vocab.token_types)
        self._chunk_re = _CHUNKS.get(rule) if norm.get("escape_whitespaces", True) else None
        self._cache: dict[str, tuple[tuple[int, int, int], ...]] = {}
        if decode_style is None:
            decode_style = "sentencepiece" if vocab.format == "spm_model" else "hf"
        if decode_style not in DECODE_STYLES:
            raise LabkitError(f"{vocab.name}: decode_style must be one of {DECODE_STYLES}, got {decode_style!r}")
        self.decode_style = decode_style
        self._unk_surface = vocab.options.get("unk_surface") or " \u2047 "
        self._remove_extra_ws = bool(settings["remove_extra_whitespaces"])
        self._byte_values = {i: parse_byte_piece(t) for i, t in enumerate(vocab.tokens) if vocab.token_types[i] == TOKEN_BYTE}

    def clear_cache(self) -> None:
        """Forget every cached word (for timing the cold path). Example: ``tok.clear_cache()``"""
        self._cache.clear()

    # -- encode -------------------------------------------------------------------
    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        # the dummy prefix belongs to the text start and to text right after an added token
        with_prefix = context.at_text_start or context.after_added
        normalizer = self.normalizer if with_prefix else self._plain_normalizer
        normalized, align = normalizer.normalize_with_alignment(text)
        if not normalized:
            return []
        out: list[tuple[int, int, int]] = []
        append = out.append
        last = len(align) - 1
        if self._chunk_re is None:
            words = [(normalized, 0)]
        else:
            words = [(m.group(), m.start()) for m in self._chunk_re.finditer(normalized)]
        cache = self._cache
        for word, base in words:
            spans = cache.get(word)
            if spans is None:
                spans = self._word(word)
            for token_id, a, b in spans:
                a += base
                b += base
                end = align[b]
                if end <= align[b - 1]:
                    # the last char was inserted (dummy prefix) or expanded: it ends where
                    # the next original char starts
                    anchor = align[b - 1]
                    j = b
                    while j < last and align[j] <= anchor:
                        j += 1
                    end = align[j]
                append((token_id, align[a], end))
        return out

    def _word(self, word: str) -> tuple[tuple[int, int, int], ...]:
        """The (id, start, end) spans of one chunk of normalised text, through the cache."""
        spans = self._cache.get(word)
        if spans is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            spans = tuple(self.model.encode_spans(word))
            if self._chunk_re is not None:
                self._cache[word] = spans
        return spans

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with no added-token matching and no BOS (a fast path for benchmarks).

        Example: ``tok.encode_ordinary("Hello world")`` -> ``[15043, 3186]`` (llama-spm)
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode_ordinary() takes str, got {type(text).__name__}")
        normalized = self.normalizer.normalize(text) if text else ""
        if not normalized:
            return []
        if self._chunk_re is None:
            return self.model.encode(normalized)
        cache = self._cache
        out: list[int] = []
        extend = out.extend
        for word in self._chunk_re.findall(normalized):
            spans = cache.get(word)
            if spans is None:
                spans = self._word(word)
            extend([s[0] for s in spans])
        return out

    # -- decode -------------------------------------------------------------------
    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        if self.decode_style == "hf":
            if skip_special_tokens:
                ids = self._drop_special(ids)
            return self._decode_like_tokenizers(ids)
        return self._decode_like_sentencepiece(ids, skip_special_tokens)

    def _decode_like_tokenizers(self, ids: list[int]) -> str:
        """tokenizers' chain: Replace('▁', ' '), ByteFallback, Fuse, Strip one space."""
        tokens = self.vocab.tokens
        parts: list[str] = []
        pending = bytearray()
        for i in ids:
            token = tokens[i]
            # tokenizers goes by the spelling: any token written <0xNN> is a byte
            value = parse_byte_piece(token)
            if value is not None:
                pending.append(value)
                continue
            if pending:
                parts.append(_bytes_all_or_nothing(pending))
                pending.clear()
            parts.append(token.replace(SPACE, " "))
        if pending:
            parts.append(_bytes_all_or_nothing(pending))
        text = "".join(parts)
        if self.add_dummy_prefix:
            if self.suffix:
                return text[:-1] if text.endswith(" ") else text
            return text[1:] if text.startswith(" ") else text
        return text

    def _decode_like_sentencepiece(self, ids: list[int], skip_special_tokens: bool) -> str:
        """sentencepiece's Decode on each run between special tokens, which are spelled out
        (or skipped: the run still ends there, as in the sentencepiece reference engine)."""
        out: list[str] = []
        run: list[int] = []
        for i in ids:
            if self.is_special_id(i):
                self._flush_run(run, out)
                if not skip_special_tokens:
                    out.append(self.vocab.tokens[i])
            else:
                run.append(i)
        self._flush_run(run, out)
        return "".join(out)

    def _flush_run(self, run: list[int], out: list[str]) -> None:
        if not run:
            return
        text = self._sentencepiece_decode(run)
        # sentencepiece strips the dummy space of every run; only the start of the text loses it
        if out and self.add_dummy_prefix and self.vocab.tokens[run[0]].startswith(SPACE):
            text = " " + text
        out.append(text)
        run.clear()

    def _sentencepiece_decode(self, ids: list[int]) -> str:
        """SentencePieceProcessor.Decode: control pieces vanish, <unk> reads its surface,
        byte runs decode one character at a time, and the first ▁ is consumed."""
        tokens, types = self.vocab.tokens, self.vocab.token_types
        strip_bos = self.add_dummy_prefix or self._remove_extra_ws
        text: list[str] = []
        pending = bytearray()
        is_bos_ws = True
        bos_ws_seen = False
        produced = False  # sentencepiece asks whether the text so far is non-empty
        for i in ids:
            kind = types[i]
            if kind == TOKEN_BYTE and self._byte_values.get(i) is not None:
                pending.append(self._byte_values[i])
                continue
            if pending:
                text.append(_bytes_char_by_char(pending))
                pending.clear()
                produced = True
            if bos_ws_seen or produced:
                is_bos_ws = False
            piece = tokens[i]
            bos_ws_seen = False
            if kind == TOKEN_CONTROL:
                continue
            if kind == TOKEN_UNKNOWN:
                text.append(self._unk_surface)
                produced = produced or bool(self._unk_surface)
                continue
            if is_bos_ws and strip_bos and piece.startswith(SPACE):
                piece = piece[1:]
                # with remove_extra_whitespaces every leading space goes
                bos_ws_seen = not self._remove_extra_ws
            text.append(piece.replace(SPACE, " "))
            produced = produced or bool(piece)
        if pending:
            text.append(_bytes_char_by_char(pending))
        return "".join(text)


def _bytes_all_or_nothing(data: bytearray) -> str:
    """tokenizers' ByteFallback: a valid run is its text, else one U+FFFD per byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "\ufffd" * len(data)


def _bytes_char_by_char(data: bytearray) -> str:
    """sentencepiece: decode one character at a time; a malformed byte becomes one U+FFFD."""
    out = []
    pos, n = 0, len(data)
    while pos < n:
        lead = data[pos]
        length = 1 if lead < 0x80 else 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
        if length and pos + length <= n:
            try:
                out.append(data[pos : pos + length].decode("utf-8"))
                pos += length
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        pos += 1
    return "".join(out)


def build(vocab: VocabData) -> SpmBpeTokenizer:
    """Build labkit's SentencePiece BPE engine; EngineUnavailable for other models.

    Example: ``build(read_gguf(bundled_path("llama-spm"))).engine`` -> ``'labkit'``
    """
    if vocab.model != MODEL_SPM_BPE:
        raise EngineUnavailable(f"{vocab.name}: labkit's spm_bpe engine serves SentencePiece BPE, not {vocab.model!r}")
    if vocab.scores is None:
        raise EngineUnavailable(f"{vocab.name}: SentencePiece BPE without piece scores")
    if vocab.options.get("scores_from_merges"):
        # a tokenizer.json keeps merges, not scores: tokenizers merges only listed pairs
        raise EngineUnavailable(f"{vocab.name}: a tokenizer.json BPE has a merges list; labkit's engine runs SentencePiece scores")
    return SpmBpeTokenizer(vocab)
