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

Decoding follows the file's reference (:mod:`labkit.algorithms.spm_decode`): a SentencePiece
``.model`` decodes like ``sentencepiece``. A GGUF is served by the subclass
:class:`labkit.engines.labkit_llama_spm.LlamaSpmTokenizer`, as llama.cpp serves it.
Introduced in notebook ``03_bpe_sentencepiece``.

Example:
    >>> import labkit
    >>> labkit.load("llama-spm", engine="labkit").encode(" Hello").ids
    [29871, 15043]
"""
from __future__ import annotations

import re
from itertools import chain, compress, repeat, zip_longest
from operator import is_

from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.charsmap import SpmNormalizer
from labkit.algorithms.specials import AddedTokenSplitter
from labkit.algorithms.spm_offsets import sentencepiece_offsets
from labkit.algorithms.spm_bpe import SPACE, SpmBpeModel, chunk_rule
from labkit.algorithms.spm_decode import SpmDecoder
from labkit.core import MODEL_SPM_BPE, EngineUnavailable, LabkitError, VocabData
from labkit.engines.base import LabkitTokenizer, SegmentContext

_CHUNKS = {
    "prefix": re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+"),
    "suffix": re.compile(f"[^{SPACE}]+{SPACE}*|{SPACE}+"),
}


# longer chunks are not cached: a cache entry's size stays bounded
CACHED_WORD_CHARS = 256  # longer words are merged every time: a cache entry's size stays bounded
# the shortest run of isolated characters (llama's digits, most CJK) that a long chunk's ids
# path looks up as a run: shorter ones are cut like the rest (16 measured fastest, as for llama.cpp's loop)
ISOLATED_RUN_CHARS = 16
_TEXT_START = SegmentContext(index=0, after_added=False, at_text_start=True)


class CharIds(BoundedDict):
    """The ids of one character merged alone, made by ``ids_of`` the first time it is asked for:
    a long chunk's one-character pieces are looked up with ``map`` (in C) through it. With
    ``one=True`` each value is the character's one id, not a tuple (a model without byte
    fallback: an unknown character is one ``<unk>``).

    Example:
        >>> ids = CharIds(lambda char: [ord(char)])
        >>> list(map(ids.__getitem__, "ab")), dict(ids)
        ([(97,), (98,)], {'a': (97,), 'b': (98,)})
        >>> list(map(CharIds(lambda char: [ord(char)], one=True).__getitem__, "ab"))
        [97, 98]
    """

    __slots__ = ("ids_of", "one")

    def __init__(self, ids_of, limit: int = 1 << 16, *, one: bool = False):
        super().__init__(limit)
        self.ids_of = ids_of
        self.one = one

    def __missing__(self, char: str) -> tuple[int, ...] | int:
        ids = tuple(self.ids_of(char))
        if self.one:
            if len(ids) != 1:
                raise LabkitError(f"CharIds: {char!r} alone is {len(ids)} tokens, not one")
            ids = ids[0]
        self[char] = ids
        return ids


class SpmBpeTokenizer(LabkitTokenizer):
    """SentencePiece score BPE in pure Python, exact against sentencepiece and tokenizers.

    Example:
        >>> from labkit.engines.labkit_spm_bpe import SpmBpeTokenizer
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> SpmBpeTokenizer(read_gguf(bundled_path("llama-spm"))).encode("Hello world").tokens
        ['▁Hello', '▁world']
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
        # a .model behaves as sentencepiece: user-defined pieces stay in the text, the
        # normaliser copies them and BPE never merges across them; elsewhere (GGUF) the
        # added-token splitter takes them out first, as llama.cpp does
        self.sentencepiece_semantics = vocab.format == "spm_model"
        user = [a.content for a in vocab.added_tokens if not a.special] if self.sentencepiece_semantics else []
        if self.sentencepiece_semantics:
            self.splitter = AddedTokenSplitter([a for a in vocab.added_tokens if a.special])
        self._user_ids = {a.content: a.id for a in vocab.added_tokens if a.content in user}
        self._user_re = re.compile("|".join(re.escape(u) for u in sorted(user, key=len, reverse=True))) if user else None
        self.normalizer = SpmNormalizer(norm.get("charsmap"), add_dummy_prefix=self.add_dummy_prefix,
                                        user_defined=user, **settings)
        self._plain_normalizer = SpmNormalizer(norm.get("charsmap"), add_dummy_prefix=False, user_defined=user, **settings)
        rule = chunk_rule(vocab.tokens, vocab.token_types)
        self._chunk_re = _CHUNKS.get(rule) if norm.get("escape_whitespaces", True) else None
        if SPACE not in self.model.symbol_to_id and not self.model.byte_fallback:
            # '▁' itself unknown (a .model whose '▁' piece is CONTROL or UNUSED, or has none):
            # it fuses with the unknowns beside it into one <unk>, across any word cut
            self._chunk_re = None
        self._cache: dict[str, tuple[tuple[int, int, int], ...]] = BoundedDict()
        self._ids_cache: dict[str, list[int]] = BoundedDict()  # the pieces of long chunks, ids only
        # a character that is a piece of its own: its one id, or (byte fallback) a tuple of ids
        self._char_ids = CharIds(self.model.encode_ids, one=not self.model.byte_fallback)
        self.decoder = SpmDecoder(
            vocab,
            style=decode_style,
            add_dummy_prefix=self.add_dummy_prefix,
            remove_extra_whitespaces=settings["remove_extra_whitespaces"],
            treat_whitespace_as_suffix=self.suffix,
        )
        self.decode_style = self.decoder.style

    def clear_cache(self) -> None:
        """Forget every cached word (for timing the cold path).

        Example (the next encode merges every word again):
            >>> import labkit
            >>> tok = labkit.load("botchan-bpe", engine="labkit")
            >>> tok.clear_cache()
            >>> tok.encode("It was a fine day").tokens
            ['▁It', '▁was', '▁a', '▁f', 'ine', '▁day']
        """
        self._cache.clear()
        self._ids_cache.clear()
        self._char_ids.clear()

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
        if self._user_re is not None:
            words = [piece for word, base in words for piece in self._cut_user_defined(word, base)]
        if self.sentencepiece_semantics:
            spans = [(i, a + base, b + base) for word, base in words for i, a, b in self._word_or_user(word)]
            return sentencepiece_offsets(spans, align)
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

    def _cut_user_defined(self, word: str, base: int) -> list[tuple[str, int]]:
        """A word cut at user-defined spellings (each its own piece), with start offsets."""
        out, cursor = [], 0
        for match in self._user_re.finditer(word):
            if match.start() > cursor:
                out.append((word[cursor:match.start()], base + cursor))
            out.append((match.group(), base + match.start()))
            cursor = match.end()
        if cursor < len(word):
            out.append((word[cursor:], base + cursor))
        return out

    def _word_or_user(self, word: str) -> tuple[tuple[int, int, int], ...]:
        user_id = self._user_ids.get(word)
        return ((user_id, 0, len(word)),) if user_id is not None else self._word(word)

    def _word(self, word: str) -> tuple[tuple[int, int, int], ...]:
        """The (id, start, end) spans of one chunk of normalised text, through the cache."""
        spans = self._cache.get(word)
        if spans is None:
            if len(word) > CACHED_WORD_CHARS:
                return self._long_word(word)
            spans = tuple(self.model.encode_spans(word))
            self._cache[word] = spans
        return spans

    def _long_word(self, word: str) -> tuple[tuple[int, int, int], ...]:
        """The spans of a long chunk (no spaces for a while): runs of isolated characters looked
        up one by one, the rest merged piece by piece where no merge can cross
        (:meth:`SpmBpeModel.cut`), each piece through the cache."""
        out: list[tuple[int, int, int]] = []
        cache, base, lookup = self._cache, 0, self.model.piece_to_id
        for index, part in enumerate(self.model.isolated_runs(word)):
            if index % 2:  # a run of isolated characters: one token each
                out += [(lookup[ch], k, k + 1) for k, ch in enumerate(part, base)]
                base += len(part)
                continue
            for piece in self.model.cut(part) if part else ():
                spans = cache.get(piece)
                if spans is None:
                    spans = tuple(self.model.encode_spans(piece))
                    if len(piece) <= CACHED_WORD_CHARS:
                        cache[piece] = spans
                out += [(token, base + a, base + b) for token, a, b in spans]
                base += len(piece)
        return tuple(out)

    def _long_word_ids(self, word: str) -> list[int]:
        """The ids of a long chunk, as :meth:`_long_word` makes them (no offsets made): cut where
        no merge can cross, each distinct piece merged once through a cache of ids (spans would
        cost a tuple per token). Where the model has a :meth:`~SpmBpeModel.runs_pattern`, the
        regex engine finds the pieces of two or more characters and each character between is
        looked up alone (:class:`CharIds`); otherwise a long run of isolated characters is looked
        up as a run and the rest cut."""
        pattern = self.model.runs_pattern()
        if pattern is not None:
            parts = pattern.split(word)  # characters alone, a piece, characters alone, ...
            pieces = self._all_ids(parts[1::2], self.model.encode_ids)
            alone = map(map, repeat(self._char_ids.__getitem__), parts[::2])
            if not self._char_ids.one:  # with byte fallback a character alone may be several ids: a tuple each
                alone = map(chain.from_iterable, alone)
            return list(chain.from_iterable(chain.from_iterable(zip_longest(alone, pieces, fillvalue=()))))  # in C
        out: list[int] = []
        lookup = self.model.piece_to_id.__getitem__
        # a short run of isolated characters is cut like the rest (each character its own piece):
        # splitting it off costs more than it saves
        for index, part in enumerate(self.model.isolated_runs(word, shortest=ISOLATED_RUN_CHARS)):
            if index % 2:
                out += map(lookup, part)
            elif part:
                out += chain.from_iterable(self._all_ids(self.model.cut(part), self.model.encode_ids))
        return out

    def _all_ids(self, pieces: list[str], ids_of) -> list[tuple[int, ...] | list[int]]:
        """The ids of each piece: the cached ones found in one pass (in C), each other distinct
        piece made once by ``ids_of`` and cached if short enough."""
        cache = self._ids_cache
        found = list(map(cache.get, pieces))
        if None in found:  # a piece not cached (the ids of a piece are never empty)
            missing = dict.fromkeys(compress(pieces, map(is_, found, repeat(None))))
            made = {piece: ids_of(piece) for piece in missing}
            cache.update({piece: ids for piece, ids in made.items() if len(piece) <= CACHED_WORD_CHARS})
            found = list(map(made.get, pieces, found))  # a piece found in the cache keeps what was found
        return found

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with no added-token matching and no BOS (a fast path for benchmarks).

        Example:
            >>> import labkit
            >>> labkit.load("llama-spm", engine="labkit").encode_ordinary("Hello world")
            [15043, 3186]
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode_ordinary() takes str, got {type(text).__name__}")
        return self._segment_ids(text, _TEXT_START)

    def _segment_ids(self, text: str, context: SegmentContext) -> list[int]:
        # ids only: what encode() gives when offsets are not read
        if self._user_re is not None and text:  # user-defined pieces inside the text: the general path
            return [i for i, _, _ in self._encode_segment(text, context)]
        normalizer = self.normalizer if context.at_text_start or context.after_added else self._plain_normalizer
        normalized = normalizer.normalize(text) if text else ""
        if not normalized:
            return []
        if self._chunk_re is None:
            return self._long_word_ids(normalized)
        cache = self._cache
        out: list[int] = []
        extend = out.extend
        for word in self._chunk_re.findall(normalized):
            spans = cache.get(word)
            if spans is None:
                if len(word) > CACHED_WORD_CHARS:
                    extend(self._long_word_ids(word))
                    continue
                spans = self._word(word)
            extend([s[0] for s in spans])
        return out

    # -- decode -------------------------------------------------------------------
    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return self.decoder.decode(ids, skip_special_tokens)


def build(vocab: VocabData) -> SpmBpeTokenizer:
    """Build labkit's SentencePiece BPE engine; EngineUnavailable for other models.

    Example:
        >>> from labkit.engines.labkit_spm_bpe import build
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> build(read_gguf(bundled_path("llama-spm"))).engine
        'labkit'
    """
    if vocab.model != MODEL_SPM_BPE:
        raise EngineUnavailable(f"{vocab.name}: labkit's spm_bpe engine serves SentencePiece BPE, not {vocab.model!r}")
    if vocab.scores is None:
        raise EngineUnavailable(f"{vocab.name}: SentencePiece BPE without piece scores")
    if vocab.options.get("scores_from_merges"):
        # a tokenizer.json keeps merges, not scores: tokenizers merges only listed pairs
        raise EngineUnavailable(f"{vocab.name}: a tokenizer.json BPE has a merges list; labkit's engine runs SentencePiece scores")
    return SpmBpeTokenizer(vocab)
