"""labkit's own Unigram engine: charsmap normalisation, then Viterbi over the piece lattice.

For a SentencePiece ``.model`` it behaves as sentencepiece 0.2.3 does (float sums, UNUSED
pieces skipped, user-defined pieces handled inside the model, where the normaliser copies
them verbatim and the lattice gives them a bonus); for a GGUF vocabulary
(``tokenizer.ggml.model == "t5"``) as llama.cpp's ``llm_tokenizer_ugm`` does (double sums,
user-defined pieces split off before the model like other added tokens). Control tokens are
matched in the text when ``parse_special=True``, as for every labkit engine.
Introduced in notebook ``05_unigram_trie_viterbi``.

Example: ``labkit.load("botchan-unigram", engine="labkit").encode("What is LoRA?").tokens[:2]`` -> ``['▁What', '▁is']``
"""
from __future__ import annotations

from labkit.algorithms.charsmap import SPACE_SYMBOL, SpmNormalizer
from labkit.algorithms.specials import AddedTokenSplitter
from labkit.algorithms.unigram import Lattice, UnigramModel
from labkit.core import (
    MODEL_UNIGRAM,
    TOKEN_BYTE,
    TOKEN_CONTROL,
    TOKEN_UNKNOWN,
    TOKEN_USER_DEFINED,
    EngineUnavailable,
    LabkitError,
    VocabData,
)
from labkit.engines.base import LabkitTokenizer, SegmentContext

_WORD_CACHE_LIMIT = 200_000  # entries; the cache is cleared when it grows past this


class LabkitUnigramTokenizer(LabkitTokenizer):
    """Unigram tokenizer built from a VocabData with scores (``.model`` or t5 GGUF).

    Example: ``tok = labkit.load("botchan-unigram", engine="labkit"); tok.lattice("Hi there")``
    """

    def __init__(self, vocab: VocabData, *, word_cache: bool = True):
        super().__init__(vocab)
        self.sentencepiece_semantics = vocab.format != "gguf"
        if self.sentencepiece_semantics:
            # sentencepiece handles user-defined pieces itself (normaliser + lattice), so only
            # control tokens are split off before the model
            self.splitter = AddedTokenSplitter([a for a in vocab.added_tokens if a.special])
        norm = dict(vocab.normalizer or {})
        user = [t for t, kind in zip(vocab.tokens, vocab.token_types) if kind == TOKEN_USER_DEFINED and t]
        self.normalizer = SpmNormalizer(
            norm.get("charsmap"),
            add_dummy_prefix=norm.get("add_dummy_prefix", True),
            remove_extra_whitespaces=norm.get("remove_extra_whitespaces", True),
            escape_whitespaces=norm.get("escape_whitespaces", True),
            treat_whitespace_as_suffix=norm.get("treat_whitespace_as_suffix", False),
            user_defined=user,
            compat="sentencepiece" if self.sentencepiece_semantics else "llama.cpp",
        )
        self.model = UnigramModel(
            vocab.tokens,
            vocab.scores,
            vocab.token_types,
            unk_id=vocab.specials.unk_id,
            sentencepiece=self.sentencepiece_semantics,
            byte_fallback=bool(vocab.options.get("byte_fallback", False)),
        )
        self.word_cache: dict | None = {} if word_cache else None
        self.unk_surface = vocab.options.get("unk_surface", " \u2047 ") if self.sentencepiece_semantics else "\u2585"

    # -- encoding ---------------------------------------------------------------
    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        normalized, align = self.normalizer.normalize_with_alignment(text)
        if not normalized:
            return []
        return [(piece_id, align[s], align[e]) for piece_id, s, e in self._pieces(normalized)]

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with no control-token matching and no BOS/EOS (the fast path).

        Example: ``tok.encode_ordinary("Hello")`` -> ``[151, 88, 21]``
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode_ordinary() takes str, got {type(text).__name__}")
        if self.sentencepiece_semantics:
            normalized = self.normalizer.normalize(text)
            return [piece_id for piece_id, _, _ in self._pieces(normalized)] if normalized else []
        return super().encode_ordinary(text)

    def _pieces(self, normalized: str) -> list[tuple[int, int, int]]:
        cache = self.word_cache
        if cache is not None and len(cache) > _WORD_CACHE_LIMIT:
            cache.clear()
        return self.model.encode_words(normalized, cache)

    def normalize(self, text: str) -> str:
        """The normalised string the model sees.

        Example: ``tok.normalize("Ｗｈａｔ  is") `` -> ``'▁What▁is'``
        """
        return self.normalizer.normalize(text)

    def lattice(self, text: str) -> Lattice:
        """The lattice of ``text`` after normalisation: every candidate piece, the best
        score at each offset and the best path (see ``labkit.viz.lattice`` to draw it).

        Example: ``tok.lattice("What is LoRA?").results_table()``
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: lattice() takes str, got {type(text).__name__}")
        return self.model.lattice(self.normalizer.normalize(text))

    # -- decoding ---------------------------------------------------------------
    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        tokens = self.vocab.tokens
        types = self.vocab.token_types
        special = self._special_ids()
        out: list[str] = []
        pending = bytearray()
        first = True

        def flush() -> None:
            if pending:
                out.append(pending.decode("utf-8", errors="replace"))
                pending.clear()

        for i in ids:
            kind = types[i]
            if kind == TOKEN_BYTE:
                pending.append(int(tokens[i][3:5], 16))
                first = False
                continue
            flush()
            if kind == TOKEN_CONTROL or i in special:
                if not skip_special_tokens:
                    out.append(tokens[i])
                    first = False
                continue
            if kind == TOKEN_UNKNOWN:
                out.append(self.unk_surface)
                first = False
                continue
            piece = tokens[i]
            if first and self.normalizer.add_dummy_prefix and not self.normalizer.treat_whitespace_as_suffix:
                piece = piece[1:] if piece.startswith(SPACE_SYMBOL) else piece
            out.append(piece.replace(SPACE_SYMBOL, " "))
            first = False
        flush()
        text = "".join(out)
        if self.normalizer.treat_whitespace_as_suffix and self.normalizer.add_dummy_prefix and text.endswith(" "):
            text = text[:-1]
        return text


def build(vocab: VocabData) -> LabkitUnigramTokenizer:
    """Build labkit's Unigram engine for a vocabulary with scores.

    Example: ``build(read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))).engine`` -> ``'labkit'``
    """
    if vocab.model != MODEL_UNIGRAM:
        raise EngineUnavailable(f"{vocab.name}: labkit's Unigram engine serves unigram vocabularies, not {vocab.model!r}")
    if not vocab.scores or len(vocab.scores) != len(vocab.tokens):
        raise EngineUnavailable(f"{vocab.name}: a Unigram vocabulary needs one score per token")
    if not any(kind == TOKEN_UNKNOWN for kind in vocab.token_types) and vocab.specials.unk_id is None:
        raise EngineUnavailable(f"{vocab.name}: a Unigram vocabulary needs an unknown token")
    return LabkitUnigramTokenizer(vocab)
