"""labkit's engine for a "llama" GGUF (SentencePiece-style vocabulary), exact against llama.cpp.

llama.cpp is the reference for a GGUF, and its "llama" tokenizer is not sentencepiece
(:mod:`labkit.algorithms.llama_spm`): no charsmap and no whitespace rules whatever the file
holds, every token a merge result, no ``<unk>``. Per stretch of ordinary text (added tokens
are split off by the base class, as llama.cpp does): a space in front when the file adds a
space prefix and the stretch starts the text or follows an added token, every space ``▁``,
then the merge loop, word by word with a cache where no token can join two words (a long
word in chunks no merge crosses, each through the cache; ids without spans when only ids
are read). Decoding
is ``llama_detokenize``'s (:func:`labkit.algorithms.llama_spm.detokenize`). The engine keeps
what :class:`~labkit.engines.labkit_spm_bpe.SpmBpeTokenizer` shows (``.model``, the textbook
loops on the same vocabulary, ``.normalizer``) for the notebooks; ids come from the loop here.
Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> import labkit
    >>> labkit.load("llama-spm", engine="labkit").encode(" Hello").ids
    [29871, 15043]
"""
from __future__ import annotations

import re
from itertools import chain

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.llama_spm import SPACE, LlamaSpm, detokenize, loops_agree
from labkit.core import MODEL_SPM_BPE, TOKEN_BYTE, LabkitError, VocabData
from labkit.engines.base import SegmentContext
from labkit.engines.labkit_spm_bpe import CACHED_WORD_CHARS, ISOLATED_RUN_CHARS, SpmBpeTokenizer
from labkit.engines.labkit_spm_bpe import build as spm_bpe_build

# words no token can join: a run of '▁' and what follows it up to the next '▁'
_WORDS = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")


class LlamaSpmTokenizer(SpmBpeTokenizer):
    """A "llama" GGUF served as llama.cpp serves it.

    Example:
        >>> from labkit.engines.labkit_llama_spm import LlamaSpmTokenizer
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> LlamaSpmTokenizer(read_gguf(bundled_path("llama-spm"))).encode("Hello world").tokens
        ['▁Hello', '▁world']
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        short = [t for t, kind in zip(vocab.tokens, vocab.token_types) if kind == TOKEN_BYTE and len(t.encode()) < 3]
        if short:
            # llama.cpp reads a byte token's value from its 4th and 5th bytes and throws on a shorter one
            raise LabkitError(f"{vocab.name}: the byte token {short[0]!r} is shorter than '<0x' and llama.cpp "
                              "ends its process when it decodes it")
        self.llama = LlamaSpm(vocab.tokens, vocab.scores)
        if loops_agree(vocab.tokens, vocab.token_types) and not self.model.user_defined:
            # the same symbols from sentencepiece's chunked bucket loop (notebook 02 §5): long
            # words without spaces cost a few passes instead of a heap entry per pair
            self.llama.fast_merge = self._sentencepiece_symbols
        self.add_space_prefix = bool(vocab.normalizer.get("add_dummy_prefix", True))
        # cutting into words is exact when no token holds a '▁' after another character
        self._words = _WORDS if all(SPACE not in t.lstrip(SPACE) for t in vocab.tokens) else None
        # a word's (or a long word's chunk's) tokens depend on its text only: two caches, the
        # spans for offsets and the bare ids for the ids-only path (no tuple per token there)
        self._llama_cache: dict[str, tuple[tuple[int, int, int], ...]] = BoundedDict()
        self._ids_cache: dict[str, tuple[int, ...]] = BoundedDict()

    def clear_cache(self) -> None:
        """Forget every cached word (for timing the cold path).

        Example:
            >>> import labkit
            >>> tok = labkit.load("llama-spm", engine="labkit")
            >>> tok.clear_cache(); tok.encode("Hello world").tokens
            ['▁Hello', '▁world']
        """
        super().clear_cache()
        self._llama_cache.clear()
        self._ids_cache.clear()

    def _sentencepiece_symbols(self, word: str) -> list[str]:
        """llama.cpp's symbols for a long ``word`` from sentencepiece's chunked bucket loop (only
        where :func:`~labkit.algorithms.llama_spm.loops_agree`), a run of characters no token
        joins (llama's digits) staying one symbol each."""
        out: list[str] = []
        for index, part in enumerate(self.llama.isolated_runs(word)):
            if index % 2:
                out += part
            elif part:
                out += self.model.merge_buckets(part)
        return out

    def _pieces(self, word: str) -> list[str]:
        """A long word in pieces that merge independently: each character of a run no merge
        joins, and the chunks between cuts (:meth:`LlamaSpm.cut`) of the rest."""
        out: list[str] = []
        for index, part in enumerate(self.llama.isolated_runs(word, shortest=ISOLATED_RUN_CHARS)):
            out += part if index % 2 else self.llama.cut(part) if part else ()
        return out

    def _chunk_spans(self, chunk: str) -> tuple[tuple[int, int, int], ...]:
        spans = self._llama_cache.get(chunk)
        if spans is None:
            try:
                spans = tuple(self.llama.encode_spans(chunk))
            except LabkitError as exc:
                raise LabkitError(f"{self.vocab.name}: {exc}") from None
            if len(chunk) <= CACHED_WORD_CHARS:
                self._llama_cache[chunk] = spans
        return spans

    def _merged_ids(self, chunk: str) -> tuple[int, ...]:
        """The ids of a word or chunk merged now (as one piece, however long)."""
        return tuple(self.llama.encode_ids(chunk))

    def _llama_word(self, word: str) -> tuple[tuple[int, int, int], ...]:
        """(id, start, end) per token of one word, offsets into the word."""
        if len(word) <= CACHED_WORD_CHARS:
            return self._chunk_spans(word)
        out: list[tuple[int, int, int]] = []
        base = 0
        for piece in self._pieces(word):
            out += [(token, base + a, base + b) for token, a, b in self._chunk_spans(piece)]
            base += len(piece)
        return tuple(out)

    def _word_ids(self, word: str) -> tuple[int, ...] | list[int]:
        """The ids of a word the cache does not hold, as :meth:`_llama_word` gives them without
        spans: merged whole, or a long word piece by piece."""
        if len(word) <= CACHED_WORD_CHARS:
            return self._merged_ids(word)
        out: list[int] = []
        lookup = self.llama.token_to_id.__getitem__
        # a long run of characters no merge joins is looked up as a run; a short one is cut like
        # the rest (each character its own chunk): splitting it off costs more than it saves
        for index, part in enumerate(self.llama.isolated_runs(word, shortest=ISOLATED_RUN_CHARS)):
            if index % 2:
                try:  # each character a token (llama's digits): one pass in C
                    out += list(map(lookup, part))
                except KeyError:  # some character spelled by its bytes: character by character, cached
                    out += chain.from_iterable(self._all_ids(list(part), self._merged_ids))
            elif part:
                out += chain.from_iterable(self._all_ids(self.llama.cut(part), self._merged_ids))
        return out

    def _segment_ids(self, text: str, context: SegmentContext) -> list[int]:
        # ids only (what encode() gives when offsets are not read): no spans, no alignment
        normalized = self._normalized(text, context)
        if not normalized:
            return []
        words = [normalized] if self._words is None else self._words.findall(normalized)
        try:
            return list(chain.from_iterable(self._all_ids(words, self._word_ids)))
        except LabkitError as exc:  # a character llama.cpp cannot spell (see LlamaSpm.byte_tokens)
            raise LabkitError(f"{self.vocab.name}: {exc}") from None

    def _normalized(self, text: str, context: SegmentContext) -> str:
        """The stretch as llama.cpp merges it: every space '▁', and one in front where the text
        starts or follows an added token (llama.cpp's is_prev_special) and the file adds a prefix."""
        if not text:  # llama.cpp makes no fragment of empty text, so no space prefix either
            return ""
        prefix = self.add_space_prefix and (context.at_text_start or context.after_added)
        return (" " + text if prefix else text).replace(" ", SPACE)

    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        normalized = self._normalized(text, context)
        if not normalized:
            return []
        prefix = len(normalized) - len(text)
        words = [(normalized, 0)] if self._words is None else [(m.group(), m.start())
                                                               for m in self._words.finditer(normalized)]
        # normalised char k is the text's char k - prefix; the inserted space belongs to the first char
        align = [0] * prefix + list(range(len(text) + 1))
        last = len(align) - 1
        out: list[tuple[int, int, int]] = []
        for word, base in words:
            for token, a, b in self._llama_word(word):
                a, b = a + base, b + base
                end = align[b]
                if end <= align[b - 1]:  # the token ends on the inserted space: it ends where the next char starts
                    j = b
                    while j < last and align[j] <= align[b - 1]:
                        j += 1
                    end = align[j]
                out.append((token, align[a], end))
        return out

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return detokenize(ids, self.vocab.tokens, self.vocab.token_types, special=not skip_special_tokens,
                          strip_first_space=self.add_space_prefix)


def build(vocab: VocabData):
    """labkit's engine for SentencePiece BPE: a GGUF as llama.cpp runs it (:class:`LlamaSpmTokenizer`),
    any other file as sentencepiece does (:func:`labkit.engines.labkit_spm_bpe.build`).

    Example:
        >>> from labkit.engines.labkit_llama_spm import build
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> type(build(read_gguf(bundled_path("llama-spm")))).__name__
        'LlamaSpmTokenizer'
    """
    if vocab.format != "gguf" or vocab.model != MODEL_SPM_BPE or vocab.scores is None:
        return spm_bpe_build(vocab)  # serves it or says why not
    return LlamaSpmTokenizer(vocab)
