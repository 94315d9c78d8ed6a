"""labkit's engine for a "llama" GGUF (SentencePiece-style vocabulary), exact against llama.cpp.

llama.cpp is the reference for a GGUF, and its "llama" tokenizer is not sentencepiece
(:mod:`labkit.algorithms.llama_spm`): no charsmap and no whitespace rules whatever the file
holds, every token a merge result, no ``<unk>``. Per stretch of ordinary text (added tokens
are split off by the base class, as llama.cpp does): a space in front when the file adds a
space prefix and the stretch starts the text or follows an added token, every space ``▁``,
then the merge loop, word by word with a cache where no token can join two words. Decoding
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

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.llama_spm import SPACE, LlamaSpm, detokenize, loops_agree
from labkit.core import MODEL_SPM_BPE, TOKEN_BYTE, LabkitError, VocabData
from labkit.engines.base import SegmentContext
from labkit.engines.labkit_spm_bpe import CACHED_WORD_CHARS, SpmBpeTokenizer
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
        self._llama_cache: dict[str, tuple[tuple[int, int, int], ...]] = BoundedDict()

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

    def _sentencepiece_symbols(self, word: str) -> list[str]:
        """llama.cpp's symbols for ``word`` from sentencepiece's loops (only where
        :func:`~labkit.algorithms.llama_spm.loops_agree`): a run of characters no token joins
        (llama's digits) stays one symbol each, the rest goes through the chunked bucket loop."""
        out: list[str] = []
        for index, part in enumerate(self.model.isolated_runs(word)):
            if index % 2:
                out += part
            elif part:
                out += self.model.merge_buckets(part)
        return out

    def _llama_word(self, word: str) -> tuple[tuple[int, int, int], ...]:
        spans = self._llama_cache.get(word)
        if spans is None:
            try:
                spans = tuple(self.llama.encode_spans(word))
            except LabkitError as exc:
                raise LabkitError(f"{self.vocab.name}: {exc}") from None
            if len(word) <= CACHED_WORD_CHARS:
                self._llama_cache[word] = spans
        return spans

    def _segment_ids(self, text: str, context: SegmentContext) -> list[int]:
        return [token for token, _, _ in self._encode_segment(text, context)]

    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        # llama.cpp's is_prev_special: the text's start and the text after an added token get the space
        if not text:  # llama.cpp makes no fragment of empty text, so no space prefix either
            return []
        prefix = 1 if self.add_space_prefix and (context.at_text_start or context.after_added) else 0
        normalized = (" " * prefix + text).replace(" ", SPACE)
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
