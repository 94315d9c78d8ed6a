"""labkit's own Unigram engine: charsmap normalisation, then Viterbi over the piece lattice.

For a SentencePiece ``.model`` it behaves as sentencepiece 0.2.3 does (float sums, UNUSED
pieces skipped, user-defined pieces handled inside the model, where the normaliser copies
them verbatim and the lattice gives them a bonus); for a GGUF vocabulary
(``tokenizer.ggml.model == "t5"``) as llama.cpp's ``llm_tokenizer_ugm`` does (double sums,
user-defined pieces split off before the model like other added tokens). Control tokens are
matched in the text when ``parse_special=True``, as for every labkit engine. Decoding is
:mod:`labkit.algorithms.spm_decode`, shared with the SentencePiece BPE engine: a ``.model``
decodes like sentencepiece, tokenizer.json like the ``tokenizers`` chain, a GGUF as llama.cpp's
``llama_detokenize`` (:func:`labkit.algorithms.llama_spm.detokenize`).
Introduced in notebook ``05_unigram_trie_viterbi``.

Example:
    >>> import labkit
    >>> labkit.load("botchan-unigram", engine="labkit").encode("What is LoRA?").tokens[:2]
    ['▁What', '▁is']
"""
from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate

from labkit.algorithms.charsmap import SPACE_SYMBOL, SpmNormalizer
from labkit.algorithms.llama_spm import detokenize as llama_detokenize
from labkit.algorithms.specials import AddedTokenSplitter
from labkit.algorithms.spm_decode import SpmDecoder
from labkit.algorithms.spm_offsets import sentencepiece_offsets
from labkit.algorithms.unigram import Lattice, UnigramModel, split_words
from labkit.algorithms.ugm_steps import steps
from labkit.algorithms.unigram_words import WordCache
from labkit.core import (
    MODEL_UNIGRAM,
    TOKEN_UNKNOWN,
    TOKEN_USER_DEFINED,
    EngineUnavailable,
    LabkitError,
    VocabData,
)
from labkit.engines.base import LabkitTokenizer, SegmentContext

_NON_SPACE = re.compile(r"[^ ]+")


class LabkitUnigramTokenizer(LabkitTokenizer):
    """Unigram tokenizer built from a VocabData with scores (``.model`` or t5 GGUF).

    Example:
        >>> import labkit
        >>> tok = labkit.load("botchan-unigram", engine="labkit")
        >>> tok.lattice("Hi there")
        <Lattice '▁Hi▁there': 16 candidate pieces, best path '▁ | H | i | ▁there', score -21.4842>
    """

    def __init__(self, vocab: VocabData, *, word_cache: bool = True):
        super().__init__(vocab)
        self.sentencepiece_semantics = vocab.format != "gguf"
        if self.sentencepiece_semantics:
            # sentencepiece handles user-defined pieces itself (normaliser + lattice), so only
            # control tokens are split off before the model
            self.splitter = AddedTokenSplitter([a for a in vocab.added_tokens if a.special])
        self.normalizer = SpmNormalizer.from_vocab(
            vocab, compat="sentencepiece" if self.sentencepiece_semantics else "llama.cpp"
        )
        self.model = UnigramModel(
            vocab.tokens,
            vocab.scores,
            vocab.options.get("lattice_token_types", vocab.token_types),
            unk_id=vocab.specials.unk_id,
            sentencepiece=self.sentencepiece_semantics,
            byte_fallback=bool(vocab.options.get("byte_fallback", False)),
            score_types=vocab.options.get("score_token_types"),
        )
        self.word_cache: WordCache | None = WordCache(self.model) if word_cache and self.model.word_boundary else None
        n = self.normalizer
        # text the charsmap leaves alone: its '▁'-words are its space-separated words
        self._plain_words = (
            n.compat == "sentencepiece" and n.add_dummy_prefix and n.remove_extra_whitespaces and n.escape_whitespaces
            and not n.treat_whitespace_as_suffix and self.word_cache is not None
        )
        self._needs_lookup = n.needs_lookup
        # llama.cpp's normaliser can split a character when a user-defined token is not ASCII
        self._split_risk = n.can_split_chars
        # a .model decodes like sentencepiece, GGUF and tokenizer.json like tokenizers
        self.decoder = SpmDecoder(
            vocab,
            add_dummy_prefix=n.add_dummy_prefix,
            remove_extra_whitespaces=n.remove_extra_whitespaces,
            treat_whitespace_as_suffix=n.treat_whitespace_as_suffix,
        )

    def clear_cache(self) -> None:
        """Forget every cached word (for timing the cold path).

        Example:
            >>> import labkit
            >>> tok = labkit.load("botchan-unigram", engine="labkit")
            >>> warm = tok.encode("It was a fine day").ids
            >>> tok.clear_cache()
            >>> tok.encode("It was a fine day").ids == warm
            True
        """
        if self.word_cache is not None:
            self.word_cache.clear()

    # -- encoding ---------------------------------------------------------------
    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        cache = self.word_cache
        if self._plain_words and cache is not None and SPACE_SYMBOL not in text and not self._needs_lookup(text):
            fast = self._encode_plain(text, cache)
            if fast is not None:
                return [(piece_id, start, end) for piece_id, (start, end) in zip(*fast)]
        if self._split_risk and self.normalizer.may_split_chars(text):
            return self._encode_split_chars(text)
        normalized, align = self.normalizer.normalize_with_alignment(text)
        if not normalized:
            return []
        if self.sentencepiece_semantics:
            return sentencepiece_offsets(list(self._pieces(normalized)), align)
        return [(piece_id, align[s], align[e]) for piece_id, s, e in self._pieces(normalized)]

    def _encode_split_chars(self, text: str) -> list[tuple[int, int, int]]:
        """A GGUF text whose normalisation splits a character (see
        :mod:`labkit.algorithms.ugm_steps`): normalised as bytes, stepped as llama.cpp steps,
        and each token's byte span mapped back to the characters it came from."""
        normalized, norm_to_orig = self.normalizer.normalize_bytes(text.encode("utf-8", "surrogatepass"))
        stepped, starts = steps(normalized)
        char_starts = array("q", accumulate((len(ch.encode("utf-8", "surrogatepass")) for ch in text), initial=0))
        out = []
        for piece_id, s, e in self._pieces(stepped):
            first, last = norm_to_orig[starts[s]], norm_to_orig[starts[e]]
            # a byte inside a character belongs to it: starts round down, ends round up
            out.append((piece_id, bisect_right(char_starts, first) - 1, bisect_left(char_starts, last)))
        return out

    def _segment_ids(self, text: str, context: SegmentContext) -> list[int]:
        # the ids-only path: an Encoding's offsets are then worked out only when read
        return self._ordinary_ids(text)

    def _encode_plain(self, text: str, cache: WordCache) -> tuple[list[int], list[tuple[int, int]]] | None:
        """Text the charsmap leaves alone, word by word: (ids, offsets), or None if it has
        unknowns (their merging crosses words, so the general path handles them)."""
        spans = [m.span() for m in _NON_SPACE.finditer(text)]
        results = cache.word_pieces([text[a:b] for a, b in spans], after_space=True)
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        unk = self.model.unk_id
        space_at = spans[0][0] if spans else 0  # the dummy prefix sits where the text starts
        for (a, b), pieces in zip(spans, results):
            word_ids = [piece_id for piece_id, _, _ in pieces]
            if unk in word_ids:
                return None
            ids.extend(word_ids)
            shift = a - 1
            offsets.extend([(space_at if s == 0 else shift + s, shift + e) for _, s, e in pieces])
            space_at = b  # the next word's '▁' is the first space after this word
        return ids, offsets

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with no control-token matching and no BOS/EOS (the fast path).

        Example:
            >>> import labkit
            >>> tok = labkit.load("botchan-unigram")
            >>> tok.encode_ordinary("Hello")
            [151, 88, 21]
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode_ordinary() takes str, got {type(text).__name__}")
        return self._ordinary_ids(text)

    def _ordinary_ids(self, text: str) -> list[int]:
        """The ids of ordinary text, without offsets (word cache, '▁'-words)."""
        if self.sentencepiece_semantics:
            cache = self.word_cache
            if self._plain_words and SPACE_SYMBOL not in text and not self._needs_lookup(text):
                # text the charsmap leaves alone: its '▁'-words are its space-separated words
                words = [w for w in text.split(" ") if w]
                return cache.ids(words, after_space=True) if words else []
            normalized = self.normalizer.normalize(text)
            if not normalized:
                return []
            if cache is None:
                return [piece_id for piece_id, _, _ in self.model.encode(normalized)]
            if normalized.startswith("\u2581"):
                return cache.ids(normalized[1:].split("\u2581"), after_space=True)
            return cache.ids(split_words(normalized))
        return super().encode_ordinary(text) if text else []

    def _pieces(self, normalized: str) -> list[tuple[int, int, int]]:
        cache = self.word_cache
        return self.model.encode(normalized) if cache is None else cache.encode(normalized)

    def normalize(self, text: str) -> str:
        """The normalised string the model sees. (Where llama.cpp's t5 normaliser splits a
        character, see :mod:`labkit.algorithms.ugm_steps`, its bytes are not UTF-8: this shows
        them as U+FFFD, and ``normalizer.normalize_bytes`` gives them as they are.)

        Example:
            >>> import labkit
            >>> tok = labkit.load("botchan-unigram")
            >>> tok.normalize("Ｗｈａｔ  is")
            '▁What▁is'
        """
        return self.normalizer.normalize(text)

    def lattice(self, text: str) -> Lattice:
        """The lattice of ``text`` after normalisation: every candidate piece, the best
        score at each offset and the best path (see ``labkit.viz.lattice`` to draw it).

        Example:
            >>> import labkit
            >>> tok = labkit.load("botchan-unigram", engine="labkit")
            >>> tok.lattice("What is LoRA?").results_table()[0]
            {'offset': 0, 'char': '', 'best_score': 0.0, 'last_piece': '', 'last_id': None, 'starts_at': None, 'on_best_path': True}
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: lattice() takes str, got {type(text).__name__}")
        if self._split_risk and self.normalizer.may_split_chars(text):
            normalized, _ = self.normalizer.normalize_bytes(text.encode("utf-8", "surrogatepass"))
            return self.model.lattice(steps(normalized)[0])  # a broken step shows as UNMATCHABLE
        return self.model.lattice(self.normalizer.normalize(text))

    # -- decoding ---------------------------------------------------------------
    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        if not self.sentencepiece_semantics:  # a GGUF decodes as llama.cpp's llama_detokenize
            return llama_detokenize(ids, self.vocab.tokens, self.vocab.token_types, special=not skip_special_tokens,
                                    strip_first_space=self.normalizer.add_dummy_prefix)
        return self.decoder.decode(ids, skip_special_tokens)


def build(vocab: VocabData) -> LabkitUnigramTokenizer:
    """Build labkit's Unigram engine for a vocabulary with scores.

    Example:
        >>> from labkit.engines.labkit_unigram import build
        >>> from labkit.formats.spm_model import read_spm_model
        >>> from labkit.paths import data_path
        >>> build(read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))).engine
        'labkit'
    """
    if vocab.model != MODEL_UNIGRAM:
        raise EngineUnavailable(f"{vocab.name}: labkit's Unigram engine serves unigram vocabularies, not {vocab.model!r}")
    if not vocab.scores or len(vocab.scores) != len(vocab.tokens):
        raise EngineUnavailable(f"{vocab.name}: a Unigram vocabulary needs one score per token")
    if not any(kind == TOKEN_UNKNOWN for kind in vocab.token_types) and vocab.specials.unk_id is None:
        raise EngineUnavailable(f"{vocab.name}: a Unigram vocabulary needs an unknown token")
    return LabkitUnigramTokenizer(vocab)
