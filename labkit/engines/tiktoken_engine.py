"""The ``tiktoken`` reference engine: a ``tiktoken.Encoding`` behind the labkit surface.

tiktoken is rank BPE: neighbours merge when their concatenation has a rank, lowest first.
A ``.tiktoken`` file gives the ranks directly (ids = ranks). A byte-level GGUF vocabulary
(GPT-2, Qwen2, ...) can be served too when merge k creates a token whose id grows with k:
then "rank = id" orders the merges exactly as the file's merge list does. The split regex
comes from :mod:`labkit.algorithms.pretokenize`; models that NFC-normalise get NFC first.
Added tokens become tiktoken "special tokens"; ``parse_special`` picks which are allowed.
For a GGUF the reference is llama.cpp, and a file where tiktoken could answer otherwise is
refused at load (:func:`_gguf_differs`: unused tokens, added tokens llama.cpp finds otherwise,
tokens one of the two makes and the other cannot).
Introduced in notebook ``00_tour``.

Example:
    >>> import labkit
    >>> labkit.load("cl100k_base", engine="tiktoken").encode("Hello world").ids
    [9906, 1917]
"""
from __future__ import annotations

import functools
import unicodedata

import tiktoken

from labkit.algorithms.bytes_unicode import char_spans, try_gpt2_to_bytes
from labkit.algorithms.pretokenize import get_pre_tokenizer, reference_nfc
from labkit.algorithms.specials import AddedTokenSplitter, longest_first_differs
from labkit.core import MODEL_BPE_BYTE
from labkit.core import TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_TYPE_NAMES, TOKEN_UNUSED, TOKEN_USER_DEFINED
from labkit.core import Encoding, EngineUnavailable, FormatError, LabkitError, Tokenizer, VocabData, library_failure
from labkit.engines.base import applies_nfc, frame, nfc_aligned


class TiktokenTokenizer(Tokenizer):
    """A labkit Tokenizer whose work is done by a ``tiktoken.Encoding`` (``.backend``).

    Example:
        >>> import labkit
        >>> labkit.load("gpt2", engine="tiktoken").encode(" world").tokens
        ['Ġworld']

    Introduced in notebook ``00_tour``.
    """

    engine = "tiktoken"

    def __init__(self, vocab: VocabData, backend: tiktoken.Encoding, *, nfc: bool, id_bytes: list[bytes | None]):
        super().__init__(vocab, backend=backend)
        self._nfc = nfc
        self._id_bytes = id_bytes
        self._special = frozenset(a.content for a in vocab.added_tokens if a.special and a.content)
        self._plain_added = frozenset(a.content for a in vocab.added_tokens if not a.special and a.content)
        self._splitter = AddedTokenSplitter(vocab.added_tokens)
        self._allowed = self._special | self._plain_added
        # ids tiktoken does not know (holes in the ranks); a decode that avoids them is tiktoken's own
        self._holes = frozenset(i for i, raw in enumerate(id_bytes) if raw is None)

    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        # Tokenizer.encode has already refused lone surrogates (tiktoken would make them U+FFFD)
        # non-special added tokens are always matched; special ones only when parsing them
        allowed = self._allowed if parse_special else self._plain_added
        if self._nfc and not text.isascii() and not unicodedata.is_normalized("NFC", text):
            normalized, nfc = self._nfc_between_added(text, parse_special), True
        else:
            normalized, nfc = text, False
        try:
            ids = self.backend.encode(normalized, allowed_special=allowed, disallowed_special=())
        except BaseException as exc:  # a Rust panic is a BaseException
            if not library_failure(exc):
                raise
            raise LabkitError(f"{self.name}: tiktoken could not encode {text[:40]!r}: {exc}") from None
        model_ids = ids
        if add_special_tokens:
            ids = frame(self.vocab, ids, [], len(text))[0]

        def offsets() -> list[tuple[int, int]]:
            # made only when asked for: an ids-only caller costs what tiktoken costs
            spans = self._char_offsets(model_ids, normalized)
            if nfc:
                char_map = self._nfc_map_between_added(text, parse_special)
                spans = [_map_back(char_map, start, end) for start, end in spans]
            return frame(self.vocab, model_ids, spans, len(text))[1] if add_special_tokens else spans

        return Encoding(ids, lambda: list(map(self.vocab.tokens.__getitem__, ids)), offsets)

    def _nfc_between_added(self, text: str, parse_special: bool) -> str:
        """NFC of the ordinary text between added tokens, as tokenizers computes it (an added
        token is never normalised, nor composed with what follows it)."""
        return "".join(text[start:end] if added_id is not None else reference_nfc(text[start:end])
                       for start, end, added_id in self._splitter.split(text, parse_special))

    def _nfc_map_between_added(self, text: str, parse_special: bool) -> list[tuple[int, int]]:
        """The char map from :meth:`_nfc_between_added`'s text back to ``text`` (made only when
        offsets are read)."""
        char_map: list[tuple[int, int]] = []
        for start, end, added_id in self._splitter.split(text, parse_special):
            if added_id is not None:
                char_map.extend((i, i + 1) for i in range(start, end))
                continue
            _, piece_map = nfc_aligned(text[start:end], self.vocab)
            char_map.extend((start + a, start + b) for a, b in piece_map)
        return char_map

    def _char_offsets(self, ids: list[int], text: str) -> list[tuple[int, int]]:
        """(start, end) chars of each token: a token holding part of a character gets all of it."""
        return char_spans(text, [len(self._id_bytes[i] or b"") for i in ids])

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        if not skip_special_tokens and (not self._holes or self._holes.isdisjoint(ids)):
            return self.backend.decode(ids)  # tiktoken decodes invalid UTF-8 to U+FFFD too
        chunks = []
        for i in ids:
            if skip_special_tokens and self.is_special_id(i):
                continue
            raw = self._id_bytes[i]
            # ids tiktoken does not know (holes in the ranks) decode as their placeholder spelling
            chunks.append(raw if raw is not None else self.vocab.tokens[i].encode("utf-8"))
        return b"".join(chunks).decode("utf-8", errors="replace")


# one of each kind of character a split pattern must not skip
_COVERAGE_PROBE = "".join(chr(c) for c in range(0x20, 0x7F)) + " \t\n\r  x\u00a0\u3000,.!?…。，、।۔،() é東 1"


def _uncovered_text(pattern: str) -> str:
    """Text of the probe the pattern leaves between its matches ('' when it covers all)."""
    import regex

    compiled = regex.compile(pattern)
    gaps, cursor = [], 0
    for match in compiled.finditer(_COVERAGE_PROBE):
        if match.start() > cursor:
            gaps.append(_COVERAGE_PROBE[cursor:match.start()])
        cursor = max(cursor, match.end())
    if cursor < len(_COVERAGE_PROBE):
        gaps.append(_COVERAGE_PROBE[cursor:])
    return "".join(gaps)[:12]


def _map_back(char_map: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    if start >= end:
        point = char_map[start][0] if start < len(char_map) else (char_map[-1][1] if char_map else 0)
        return (point, point)
    return (char_map[start][0], char_map[end - 1][1])


def _ranks_from_vocab(vocab: VocabData) -> dict[bytes, int]:
    """Mergeable ranks: the tokens' bytes with rank = id (checked against the merge order)."""
    ranks: dict[bytes, int] = {}
    added_ids = {a.id for a in vocab.added_tokens}
    for index, (token, ttype) in enumerate(zip(vocab.tokens, vocab.token_types)):
        if index in added_ids or ttype != TOKEN_NORMAL:
            continue
        raw = vocab.token_bytes[index] if vocab.token_bytes is not None else try_gpt2_to_bytes(token)
        if raw is None:
            raise EngineUnavailable(f"{vocab.name}: token #{index} {token!r} is not a byte-level spelling")
        if raw in ranks:
            raise EngineUnavailable(f"{vocab.name}: tokens #{ranks[raw]} and #{index} are the same bytes")
        ranks[raw] = index
    if len({r for r in ranks if len(r) == 1}) != 256:
        raise EngineUnavailable(f"{vocab.name}: not every single byte is a token, tiktoken cannot fall back")
    if vocab.merges is not None:
        ids = {t: i for i, t in enumerate(vocab.tokens)}
        last = -1
        for k, (left, right) in enumerate(vocab.merges):
            made = ids.get(left + right)
            if made is None or made <= last:
                raise EngineUnavailable(
                    f"{vocab.name}: merge #{k} {left!r}+{right!r} does not create a token with a higher id "
                    "than the merge before it, so ids cannot serve as tiktoken ranks"
                )
            last = made
        if vocab.format == "hf_json":
            _check_merges_are_the_ranks(vocab, ranks)
        elif vocab.format == "gguf":
            # llama.cpp merges into any token; the merges into tokens tiktoken ranks must be
            # exactly what its ranks imply (those into other tokens are _gguf_differs' business)
            ranked = {vocab.tokens[rank] for rank in ranks.values()}
            made = {left + right for left, right in vocab.merges}
            # a token no merge makes is weighed by _gguf_differs too; the check leaves it out
            orphans = frozenset(rank for rank in ranks.values() if vocab.tokens[rank] not in made)
            _check_merges_are_the_ranks(vocab, ranks, [m for m in vocab.merges if m[0] + m[1] in ranked], orphans)
    return ranks


@functools.lru_cache(maxsize=4)
def _implied_merges(by_rank: tuple[bytes | None, ...]) -> tuple[tuple[str, str], ...]:
    # deriving qwen2's 151k merges takes about a second; the same ranks loaded again reuse them
    from labkit.algorithms.bpe_merges import merges_from_ranks

    return tuple(merges_from_ranks(by_rank))


def _check_merges_are_the_ranks(vocab: VocabData, ranks: dict[bytes, int], listed=None,
                                left_out: frozenset[int] = frozenset()) -> None:
    """tiktoken joins any two neighbours whose bytes make a token; a merges list joins only the
    pairs it lists. The two agree when the list is exactly what tiktoken's ranks imply (each
    token the two parts rank BPE leaves on its bytes), as for trained vocabularies; a user's
    tokenizer.json need not be one, and then tiktoken is refused."""
    by_rank: list[bytes | None] = [None] * (max(ranks.values(), default=-1) + 1)
    for raw, rank in ranks.items():
        if rank not in left_out or len(raw) == 1:
            by_rank[rank] = raw
    try:
        implied = list(_implied_merges(tuple(by_rank)))
    except FormatError as exc:
        raise EngineUnavailable(f"{vocab.name}: tiktoken would join tokens the merges never make ({exc})") from None
    listed = [tuple(pair) for pair in (vocab.merges if listed is None else listed)]
    if implied != listed:
        where = next((k for k, (a, b) in enumerate(zip(implied, listed)) if a != b), min(len(implied), len(listed)))
        raise EngineUnavailable(f"{vocab.name}: merge #{where} is not the one tiktoken's ranks imply, so tiktoken "
                                "would merge differently")


# characters of each class the split patterns tell apart, put around a token's text to see
# whether some piece can hold it (letters, marks, digits, punctuation, spaces, line breaks, CJK)
_PIECE_CONTEXTS = ("", " ", "  ", "\t", "\n", "a", "Z", "é", "\u0301", "1", "١", "!", "'", "_", "中")


def _inside_one_piece(text: str, pattern) -> bool:
    """Whether the split ``pattern`` (compiled) leaves ``text`` inside one piece for some text
    around it (probed with :data:`_PIECE_CONTEXTS` on both sides)."""
    for before in _PIECE_CONTEXTS:
        start, end = len(before), len(before) + len(text)
        for after in _PIECE_CONTEXTS:
            if any(m.start() <= start and end <= m.end() for m in pattern.finditer(before + text + after)):
                return True
    return False


def _gguf_differs(vocab: VocabData, pattern: str, ranks: dict[bytes, int]) -> str | None:
    """Why tiktoken would serve this byte-level GGUF otherwise than llama.cpp, or None.

    llama.cpp decodes an unused token to nothing (tiktoken: its spelling); it matches added
    tokens longest first (tiktoken: in hash order where one spelling begins another); and its
    BPE joins two symbols into any token a merge makes, or (whole-word lookup) finds any token
    whole, while tiktoken's ranks hold only the normal ones. Such a token matters only where
    its text can lie inside one piece of the split.
    """
    import regex

    for kind in sorted(set(vocab.token_types) - {TOKEN_NORMAL, TOKEN_CONTROL, TOKEN_USER_DEFINED}):
        token = vocab.tokens[vocab.token_types.index(kind)]
        what = "decodes to nothing in llama.cpp" if kind == TOKEN_UNUSED else "is decoded by llama.cpp's rules for its type"
        return f"the {TOKEN_TYPE_NAMES.get(kind, f'type-{kind}')} token {token!r} {what}"
    differs = longest_first_differs(vocab.added_tokens)
    if differs is not None:
        return f"llama.cpp finds added tokens longest first: {differs}"
    spellings = sorted({a.content for a in vocab.added_tokens if a.content})
    for shorter, longer in zip(spellings, spellings[1:]):  # sorted: a spelling another begins with is just before it
        if longer.startswith(shorter):
            return f"the added tokens {shorter!r} and {longer!r} begin alike, which tiktoken tries in no fixed order"
    ranked = {vocab.tokens[rank]: raw for raw, rank in ranks.items()}
    made = {left + right for left, right in vocab.merges or ()}
    whole_word = get_pre_tokenizer(vocab.pre or "default").ignore_merges
    compiled = regex.compile(pattern)
    for index, token in enumerate(vocab.tokens):
        if token in ranked:
            raw = ranked[token]
            if len(raw) == 1 or token in made:
                continue  # tiktoken and llama.cpp both make it (the merges are the ranks', checked)
            joinable = any(token[:k] in ranked and token[k:] in ranked for k in range(1, len(token)))
            if whole_word and not joinable:
                continue  # found whole by both, joined into by neither
            how = "tiktoken makes (joined or whole) and llama.cpp's merges never do"
        elif token in made or whole_word:
            raw = try_gpt2_to_bytes(token)
            if raw is None:
                continue  # no byte-level text spells it: no piece of text becomes it
            how = f"{'a merge' if token in made else 'the whole-word lookup'} of llama.cpp's gives and tiktoken's ranks never do"
        else:
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None  # part of a character: inside that character's piece
        if text is None or _inside_one_piece(text, compiled):
            kind = TOKEN_TYPE_NAMES.get(vocab.token_types[index], "")
            return f"the {kind} token {token!r} can lie inside one piece of the split, which {how}"
    return None


def build(vocab: VocabData) -> TiktokenTokenizer:
    """Build the tiktoken engine for a byte-level BPE vocabulary with a single split regex.

    Example:
        >>> from labkit.engines.tiktoken_engine import build
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> build(read_gguf(bundled_path("qwen2"))).encode("Hello world").ids
        [9707, 1879]

    Introduced in notebook ``00_tour``.
    """
    if vocab.model != MODEL_BPE_BYTE:
        raise EngineUnavailable(f"{vocab.name}: tiktoken serves byte-level BPE only, not {vocab.model!r}")
    if vocab.options.get("dna_kmers"):
        raise EngineUnavailable(f"{vocab.name}: a hybriddna GGUF reads DNA between <dna> and </dna> as k-mers, "
                                "which tiktoken cannot; engine='labkit' serves it as llama.cpp does")
    spec = get_pre_tokenizer(vocab.pre or "default")
    pattern = spec.pattern
    if pattern is None:
        raise EngineUnavailable(
            f"{vocab.name}: pre-tokenizer {spec.name!r} is {len(spec.regexes)} regexes in sequence; tiktoken takes one"
        )
    uncovered = _uncovered_text(pattern)
    if uncovered:
        # tiktoken drops text its pattern does not match; the split keeps it as a piece
        raise EngineUnavailable(
            f"{vocab.name}: pre-tokenizer {spec.name!r} leaves text such as {uncovered!r} unmatched, "
            "which tiktoken would drop"
        )
    ranks = _ranks_from_vocab(vocab)
    if vocab.format == "gguf":
        differs = _gguf_differs(vocab, pattern, ranks)
        if differs is not None:
            raise EngineUnavailable(f"{vocab.name}: engine 'tiktoken' would serve this GGUF otherwise than llama.cpp "
                                    f"({differs}); engine='labkit' serves it as llama.cpp does")
    # an empty added token matches nowhere, and tiktoken's encoder loops forever on one
    specials = {a.content: a.id for a in vocab.added_tokens if a.content}
    try:
        backend = tiktoken.Encoding(
            name=vocab.name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials,
        )
    except BaseException as exc:  # a Rust panic is a BaseException
        if not library_failure(exc):
            raise
        raise FormatError(f"{vocab.name}: tiktoken could not build this vocabulary: {exc}") from None
    id_bytes: list[bytes | None] = [None] * len(vocab.tokens)
    for raw, rank in ranks.items():
        id_bytes[rank] = raw
    for content, index in specials.items():
        id_bytes[index] = content.encode("utf-8")
    return TiktokenTokenizer(vocab, backend, nfc=applies_nfc(vocab, spec.nfc), id_bytes=id_bytes)
