"""labkit's engine for a "bert" GGUF (WordPiece with llama.cpp's phantom space), exact against llama.cpp.

llama.cpp is the reference for a GGUF, and its WordPiece is not BERT's pipeline
(:mod:`labkit.algorithms.llama_wpm`): its own normalisation and Unicode tables, matching on
the file's own spellings with no word-length limit, its own decoding (the first word keeps
its space; ``clean_spaces``). Added tokens are split off by the base class, as llama.cpp
does; ``add_special_tokens`` frames the ids with the BOS id and the SEP id.
The engine keeps what :class:`~labkit.engines.labkit_wordpiece.WordPieceTokenizer` shows
(``.basic``, ``.model`` on the vocab.txt spellings) for notebook 04; ids come from llama.cpp's loop.
Introduced in notebook ``04_wordpiece``.

Example:
    >>> import labkit
    >>> tok = labkit.load("bert-bge", engine="labkit")
    >>> tok.encode("Hello, world!").tokens, tok.decode(tok.encode("Hello, world!").ids)
    (['hello', ',', 'world', '!'], ' hello, world!')
"""
from __future__ import annotations

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.llama_wpm import SPACE, detokenize, match_word, words_with_spans
from labkit.algorithms.llama_wpm import preprocess as llama_preprocess
from labkit.core import TOKEN_BYTE, LabkitError, VocabData
from labkit.engines.base import SegmentContext
from labkit.engines.labkit_spm_bpe import CACHED_WORD_CHARS
from labkit.engines.labkit_wordpiece import WordPieceTokenizer
from labkit.engines.labkit_wordpiece import build as wordpiece_build



class LlamaWpmTokenizer(WordPieceTokenizer):
    """A "bert" GGUF served as llama.cpp serves it.

    Example:
        >>> from labkit.engines.labkit_llama_wpm import LlamaWpmTokenizer
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> LlamaWpmTokenizer(read_gguf(bundled_path("bert-bge"))).encode("unaffable").tokens
        ['una', '##ffa', '##ble']
    """

    def __init__(self, vocab: VocabData):
        super().__init__(vocab)
        self.spellings = list(vocab.options["gguf_spellings"])
        if vocab.specials.unk_id is None:
            raise LabkitError(f"{vocab.name}: no unknown token (no tokenizer.ggml.unknown_token_id, and id 100 "
                              "is outside the vocabulary): llama.cpp writes the id -1 for a word it cannot match")
        if TOKEN_BYTE in vocab.token_types:
            token = self.spellings[vocab.token_types.index(TOKEN_BYTE)]
            raise LabkitError(f"{vocab.name}: the token {token!r} is typed byte, which llama.cpp cannot decode "
                              "in a bert vocabulary: its load, which decodes every token, ends its process")
        self.token_to_spelling_id = {spelling: index for index, spelling in enumerate(self.spellings)}
        self.max_token_chars = max(len(s) for s in self.spellings)
        norm = vocab.normalizer
        self.lowercase = bool(norm.get("lowercase", True))
        self.strip_accents = bool(norm.get("strip_accents", self.lowercase))
        self._llama_cache: dict[str, tuple[int, ...]] = BoundedDict()

    def clear_cache(self) -> None:
        """Forget every cached word (for timing the cold path).

        Example:
            >>> import labkit
            >>> tok = labkit.load("bert-bge", engine="labkit")
            >>> tok.clear_cache(); tok.encode("tokenization").tokens
            ['token', '##ization']
        """
        super().clear_cache()
        self._llama_cache.clear()

    def _llama_word(self, word: str) -> tuple[int, ...]:
        ids = self._llama_cache.get(word)
        if ids is None:
            ids = tuple(match_word(word, self.token_to_spelling_id, self.max_token_chars, self.vocab.specials.unk_id))
            if len(word) <= CACHED_WORD_CHARS:
                self._llama_cache[word] = ids
        return ids

    def _segment_ids(self, text: str, context: SegmentContext | None) -> list[int]:
        out: list[int] = []
        for word in llama_preprocess(text, lowercase=self.lowercase, strip_accents=self.strip_accents):
            out.extend(self._llama_word(word))
        return out

    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        for word, start, end in words_with_spans(text, lowercase=self.lowercase, strip_accents=self.strip_accents):
            ids = self._llama_word(word)
            if len(ids) == 1:
                out.append((ids[0], start, end))
                continue
            # each piece's share of the word: its characters (the first piece's '▁' is not one)
            position = start
            for token in ids:
                length = len(self.spellings[token]) - (1 if self.spellings[token].startswith(SPACE) else 0)
                out.append((token, position, min(position + length, end)))
                position = min(position + length, end)
        return out

    def _frame(self, ids, offsets, text_length):
        sp = self.vocab.specials
        if sp.cls_id is None or sp.sep_id is None:
            # llama.cpp asserts it has a BOS and a SEP id, and its process ends
            raise LabkitError(f"{self.name}: add_special_tokens needs BOS and SEP ids, which this vocab lacks "
                              "(llama.cpp ends its process there)")
        return super()._frame(ids, offsets, text_length)

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return detokenize(ids, self.spellings, self.vocab.token_types, special=not skip_special_tokens)

    @staticmethod
    def unsettled_tail(text: str) -> bool:
        """Whether the next token can still rewrite the end of ``text`` (llama.cpp's clean_spaces drops
        a space before ``?!.,`` and around a lone ``'``, and before ``'s 'm 're 've``): a stream holds it.

        Example:
            >>> LlamaWpmTokenizer.unsettled_tail("it '"), LlamaWpmTokenizer.unsettled_tail("it's")
            (True, False)
        """
        return text.endswith((" ", " '", " 'r", " 'v"))


def build(vocab: VocabData):
    """labkit's WordPiece engine: a GGUF as llama.cpp runs it (:class:`LlamaWpmTokenizer`), any
    other file as ``tokenizers`` does (:func:`labkit.engines.labkit_wordpiece.build`).

    Example:
        >>> from labkit.engines.labkit_llama_wpm import build
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> type(build(read_gguf(bundled_path("bert-bge")))).__name__
        'LlamaWpmTokenizer'
    """
    if vocab.format != "gguf" or "gguf_spellings" not in vocab.options:
        return wordpiece_build(vocab)
    return LlamaWpmTokenizer(vocab)
