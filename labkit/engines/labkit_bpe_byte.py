"""labkit's own byte-level BPE engine (GPT-2, Qwen2, Llama-3, cl100k ...), pure Python.

The pipeline for one stretch of ordinary text (added tokens were already cut out by
:class:`~labkit.engines.base.LabkitTokenizer`):

1. NFC where the model normalises (Qwen2), keeping a map back to the original offsets;
2. pre-tokenize with the model's regexes (:mod:`labkit.algorithms.pretokenize`);
3. for each pre-token: a cache hit, or its UTF-8 bytes -> rank BPE
   (:func:`labkit.algorithms.bpe.bpe_heap`) -> ids; with ``ignore_merges`` (Llama-3, and
   tiktoken always) a pre-token that is itself a token is taken whole.

Ranks come from the merges list (GGUF/HF: rank = line number) or, for a ``.tiktoken`` file
(``token_bytes`` given, no merges), from the token ranks themselves (rank of ``a+b``).
Decoding joins each id's bytes and decodes UTF-8 with U+FFFD for invalid sequences.
Introduced in notebook ``02_bpe_byte_level``.

Example:
    >>> import labkit
    >>> labkit.load("gpt2", engine="labkit").encode("Hello world").ids
    [15496, 995]
"""
from __future__ import annotations

import sys
import unicodedata
from array import array
from itertools import compress, repeat
from operator import is_

from labkit.algorithms.bpe import (
    FIRST_LOOP_ID,
    NO_TOKEN,
    MergeTrace,
    bpe_heap,
    bpe_rank_chunks,
    bpe_naive,
    byte_parts,
    concat_ranker,
    pair_ranker,
)
from labkit.algorithms.bounded import BoundedDict
from labkit.algorithms.bytes_unicode import (bytes_to_unicode, char_spans, decode_like_byte_level, decode_like_llama_cpp,
                                           try_gpt2_to_bytes)
from labkit.algorithms.pretokenize import PreTokenizerSpec, get_pre_tokenizer
from labkit.core import (
    MODEL_BPE_BYTE,
    TOKEN_CONTROL,
    TOKEN_UNUSED,
    EngineUnavailable,
    FormatError,
    LabkitError,
    VocabData,
)
from labkit.engines.base import LabkitTokenizer, SegmentContext, applies_nfc, nfc_aligned

# UTF-8 bytes of each byte's symbol in the byte-level alphabet (printable ASCII 1, the others 2)
SYMBOL_WIDTH = [len(bytes_to_unicode()[value].encode("utf-8")) for value in range(256)]
# from this many bytes on, a word merges over ids rather than bytes (faster, same result)
LONG_WORD_BYTES = 24
# longer words are not cached (as in tokenizers): a cache entry's size stays bounded
CACHED_WORD_CHARS = 256
# what pairs of ids make, memoised for long words: at most about this many entries
PAIR_MEMO_ENTRIES = 1 << 20


def _char_of_each_byte(word: str) -> list[int]:
    """The index of the char each UTF-8 byte of ``word`` belongs to.

    Example:
        >>> _char_of_each_byte("aé")
        [0, 1, 1]
    """
    return [i for i, ch in enumerate(word) for _ in range(len(ch.encode("utf-8")))]


class ByteLevelBPE(LabkitTokenizer):
    """Byte-level rank BPE over a GGUF/HF merges list or a tiktoken rank table.

    Example:
        >>> from labkit.engines.labkit_bpe_byte import ByteLevelBPE
        >>> from labkit.formats.gguf import read_gguf
        >>> ByteLevelBPE(read_gguf("data/gguf/ggml-vocab-gpt-2.gguf")).encode("hi").ids
        [5303]

    Introduced in notebook ``02_bpe_byte_level``.
    """

    def __init__(self, vocab: VocabData, *, pre: str | PreTokenizerSpec | None = None):
        super().__init__(vocab)
        self.pre = get_pre_tokenizer(pre if pre is not None else vocab.pre)
        self.nfc = applies_nfc(vocab, self.pre.nfc)
        tokens = vocab.tokens
        types = vocab.token_types
        added_ids = {a.id for a in vocab.added_tokens}
        # id -> the bytes it stands for in BPE (and in decoding); bytes -> id for the model's own tokens
        self.id_bytes: list[bytes] = []
        self.bytes_id: dict[bytes, int] = {}
        token_bytes = vocab.token_bytes
        unspelled = []  # ordinary tokens outside the byte alphabet
        for i, token in enumerate(tokens):
            raw = token_bytes[i] if token_bytes is not None else None
            if raw is None and token_bytes is None and types[i] != TOKEN_CONTROL and i not in added_ids:
                raw = try_gpt2_to_bytes(token)
                if raw is None:
                    unspelled.append(i)
            if raw is None:
                # specials and added tokens decode as their text
                self.id_bytes.append(token.encode("utf-8", "replace"))
                continue
            self.id_bytes.append(raw)
            if types[i] != TOKEN_CONTROL and raw:  # b"": a hole in the ids, never a BPE result
                self.bytes_id.setdefault(raw, i)
        for i in vocab.options.get("model_special_ids", ()):
            # tokenizer.json: a special added token with its own id in model.vocab, which BPE still makes
            raw = try_gpt2_to_bytes(tokens[i]) if 0 <= i < len(tokens) else None
            if raw is not None:
                self.bytes_id.setdefault(raw, i)
        for added in vocab.added_tokens:
            if 0 <= added.id < len(self.id_bytes):
                raw = added.content.encode("utf-8", "replace")
                # tokenizers' ByteLevel decoder maps an added token's byte-alphabet chars to bytes too
                self.id_bytes[added.id] = decode_like_byte_level(added.content)
                if not added.special and try_gpt2_to_bytes(added.content) is None and vocab.format != "hf_json":
                    # a user-defined token stored as real text (GGUF writes MPT's whitespace runs
                    # with real spaces) is still what BPE makes when its bytes merge
                    self.bytes_id.setdefault(raw, added.id)
        # what decode gives per id, where it differs from the bytes BPE makes (None: the same)
        self.decoded_bytes: list[bytes] | None = None
        if vocab.format == "gguf":
            self.decoded_bytes = self._as_llama_cpp(vocab, added_ids, unspelled)

        if vocab.merges is not None:
            ranks: dict[tuple[bytes, bytes], int] = {}
            # a merge listed twice: tokenizers collects the merges into a map (the last rank
            # stays), llama.cpp emplaces them (the first stays)
            last_rank_wins = vocab.format in ("hf_json", "vocab_merges")
            # merge halves are nearly always tokens: spell each string once, not once per merge
            spelled: dict[str, bytes | None] = {}
            for index, (left, right) in enumerate(vocab.merges):
                lb = spelled.get(left)
                if lb is None:
                    lb = spelled[left] = try_gpt2_to_bytes(left)
                rb = spelled.get(right)
                if rb is None:
                    rb = spelled[right] = try_gpt2_to_bytes(right)
                if lb is None or rb is None:
                    raise FormatError(f"{vocab.name}: merge #{index} {left!r} {right!r} is not GPT-2 byte spelling")
                if last_rank_wins or (lb, rb) not in ranks:
                    ranks[lb, rb] = index
            self.pair_ranks = ranks
            self.rank = pair_ranker(ranks)
            self.ignore_merges = bool(vocab.options.get("ignore_merges", self.pre.ignore_merges))
        elif token_bytes is not None:
            # tiktoken: the rank of a pair is the rank (= id) of the token it makes
            self.pair_ranks = None
            self.rank = concat_ranker(self.bytes_id)
            # tiktoken looks a whole piece up before merging
            self.ignore_merges = True
        else:
            raise EngineUnavailable(f"{vocab.name}: byte-level BPE needs merges or token ranks, this vocab has neither")
        # single bytes with no token (real vocabularies miss 0x0B, or 0xF1/0xF2): tokenizers
        # drops such a byte and merges what is left, so labkit does too; tiktoken keeps it as
        # a part (a merge may still take it in) and fails if it is left alone, so a .tiktoken
        # file's missing byte is a LabkitError only where it stays alone
        missing = frozenset(b for b in range(256) if bytes([b]) not in self.bytes_id)
        self._missing = missing if vocab.merges is not None else frozenset()
        # a GGUF's BPE is llama.cpp's: such a byte stays a symbol while merging (see _llama_cpp_pieces)
        self._llama_cpp_leftovers = vocab.format == "gguf"
        # long words merge over ids (bpe_rank_chunks); what each pair of ids makes is memoised
        self._byte_ids = [self.bytes_id.get(bytes([b])) for b in range(256)]
        # the byte ids as a translation table when each fits a byte (GPT-2's, cl100k's): a word's
        # first ids in one C pass
        self._byte_id_table = bytes(self._byte_ids) if all(i is not None and i < 256 for i in self._byte_ids) else None
        # the bucket loops keep the top ids of the 24-bit space for themselves
        self._ids_fit_loops = len(self.id_bytes) < FIRST_LOOP_ID
        self._pairs: dict[int, int] = {}  # bounded in _long_word_ids, before each word
        self._byte_pair_table: list[int | None] | None = None  # _byte_pairs_make's, made on first use
        self._cache: dict[str, int | tuple[tuple[int, int, int], ...]] = BoundedDict()
        self._ids_cache: dict[str, tuple[int, ...]] = BoundedDict()

    # -- one word ------------------------------------------------------------
    def word_ids(self, word: str, *, naive: bool = False, trace: MergeTrace | None = None) -> list[int]:
        """BPE one pre-token (no cache): its ids. ``naive`` picks the O(n²) loop; ``trace``
        records every merge.

        Example:
            >>> import labkit
            >>> labkit.load("gpt2", engine="labkit").word_ids(" lower")
            [2793]
        """
        data = word.encode("utf-8")
        if not data:
            return []
        if self.ignore_merges and trace is None:
            whole = self.bytes_id.get(data)
            if whole is not None:
                return [whole]
        if self._missing and not self._missing.isdisjoint(data):
            return [token for token, _, _ in self._pieces_with_missing_bytes(word)]
        if len(data) >= LONG_WORD_BYTES and not naive and trace is None:
            ids = self._long_word_ids(data)
            if ids is not None:
                return ids
        parts = (bpe_naive if naive else bpe_heap)(byte_parts(data), self.rank, trace=trace)
        ids = []
        bytes_id = self.bytes_id
        for part in parts:
            token = bytes_id.get(part)
            if token is None:
                if len(part) == 1:
                    raise LabkitError(f"{self.name}: byte 0x{part[0]:02X} in {word!r} has no token in this vocabulary")
                # a merge produced bytes with no token: fall back to its single bytes
                ids.extend(self._byte_id(b, word) for b in part)
                continue
            ids.append(token)
        return ids

    def _pieces_with_missing_bytes(self, word: str) -> list[tuple[int, int, int]]:
        # a byte with no token: tokenizers drops it before merging, llama.cpp keeps it as a symbol
        if self._llama_cpp_leftovers:
            return self._llama_cpp_pieces(word, bpe_heap(byte_parts(word.encode("utf-8")), self.rank))
        return self._pieces_without_missing_bytes(word)

    def _llama_cpp_pieces(self, word: str, parts: list[bytes]) -> list[tuple[int, int, int]]:
        """(id, start, end) chars of one pre-token's merged ``parts`` as llama.cpp names them: a
        part that is no token is looked up one UTF-8 byte of its byte-level spelling at a time,
        which finds the printable ASCII bytes (spelled as themselves) and drops the rest, a byte
        with no token of its own included.

        Example:
            >>> import labkit
            >>> from labkit.paths import data_path
            >>> gpt2 = labkit.load(data_path("gguf/ggml-vocab-gpt-2.gguf"), engine="labkit")
            >>> gpt2._llama_cpp_pieces("a\\u00e9!", [b"a", b"\\xc3\\xa9!"])  # 'é!' is no token: 'é' is dropped
            [(64, 0, 1), (0, 2, 3)]
        """
        char_of = _char_of_each_byte(word)
        out, at = [], 0
        for part in parts:
            token = self.bytes_id.get(part)
            if token is not None:
                out.append((token, char_of[at], char_of[at + len(part) - 1] + 1))
            else:
                for k, value in enumerate(part):
                    # bytes_to_unicode spells 0x21-0x7E as themselves, one UTF-8 byte; any other byte takes two
                    token = self.bytes_id.get(part[k:k + 1]) if 0x21 <= value <= 0x7E else None
                    if token is not None:
                        out.append((token, char_of[at + k], char_of[at + k] + 1))
            at += len(part)
        return out

    def _pieces_without_missing_bytes(self, word: str) -> list[tuple[int, int, int]]:
        """(id, start, end) chars of one pre-token whose bytes include some with no token:
        those are dropped and BPE runs on the rest (tokenizers' BPE skips a symbol it cannot
        look up). As in tokenizers, each token is placed at the end of the one before, in the
        UTF-8 bytes of the byte-level text: a dropped byte's symbol takes no room, so the tokens
        after it sit that far to the left, and their chars are those of the text found there."""
        data = word.encode("utf-8")
        char_of = _char_of_each_byte(word)
        # the original char of each UTF-8 byte of the byte-level text (one symbol per byte)
        char_at = [char_of[k] for k, value in enumerate(data) for _ in range(SYMBOL_WIDTH[value])]
        kept = [k for k, value in enumerate(data) if value not in self._missing]
        parts = bpe_heap([data[k:k + 1] for k in kept], self.rank) if kept else []
        out, cursor = [], 0

        def placed(part: bytes) -> tuple[int, int]:
            nonlocal cursor
            start, cursor = cursor, cursor + sum(SYMBOL_WIDTH[value] for value in part)
            return char_at[start], char_at[cursor - 1] + 1

        for part in parts:
            token = self.bytes_id.get(part)
            if token is None:  # a merge made bytes with no token: its single bytes
                out.extend((self.bytes_id[part[j:j + 1]], *placed(part[j:j + 1])) for j in range(len(part)))
            else:
                out.append((token, *placed(part)))
        return out

    def _long_word_ids(self, data: bytes) -> list[int] | None:
        """A long word merged over ids (same merges as bpe_heap on bytes); None when a byte
        has no token or a merge makes bytes that are not a token (the bytes path handles both)."""
        if not self._ids_fit_loops:
            return None
        if self._byte_id_table is not None:
            start = list(data.translate(self._byte_id_table))
        else:
            start = list(map(self._byte_ids.__getitem__, data))
            if None in start:
                return None
        if len(self._pairs) > PAIR_MEMO_ENTRIES:
            self._pairs.clear()  # bounded memory (a plain dict: a memo store costs no method call)
        return bpe_rank_chunks(start, self._pairs, self._pair, self._byte_pairs_make(data))

    def _byte_pairs_make(self, data: bytes) -> list[int]:
        """What each pair of neighbouring bytes of ``data`` makes (packed as for
        bpe_rank_chunks), read from a table of the 65,536 byte pairs filled as they occur."""
        table = self._byte_pair_table
        if table is None:
            table = self._byte_pair_table = [None] * 65536
        n = len(data)
        # in C: the bytes read two at a time as 16-bit numbers (the machine's byte order, which
        # indexes the table), the pairs starting at even positions, then those at odd ones
        evens, odds = array("H", data[: n & ~1]), array("H", data[1 : 1 + ((n - 1) & ~1)])
        made: list[int | None] = [None] * (n - 1)
        made[0::2] = map(table.__getitem__, evens)
        made[1::2] = map(table.__getitem__, odds)
        if None in made:  # pairs not seen before: each distinct one asked once, then all read again
            keys: list[int] = [0] * (n - 1)
            keys[0::2], keys[1::2] = evens, odds
            byte_ids = self._byte_ids
            for key in set(compress(keys, map(is_, made, repeat(None)))):
                first, second = key.to_bytes(2, sys.byteorder)
                table[key] = self._pair(byte_ids[first], byte_ids[second])
            made = list(map(table.__getitem__, keys))
        return made

    def _as_llama_cpp(self, vocab: VocabData, added_ids: set[int], unspelled: list[int]) -> list[bytes]:
        """A GGUF read as llama.cpp reads it: BPE names each piece it leaves by looking its
        spelling up among all tokens, control ones included (so ignore_merges finds a control
        token spelled as a word); decoding gives an added token's text as it is, an unused token
        nothing, and an ordinary token outside the byte alphabet a marker (llama_decode_text)."""
        decoded = list(self.id_bytes)
        tokens, types = vocab.tokens, vocab.token_types
        for i in sorted(added_ids | {i for i, kind in enumerate(types) if kind == TOKEN_CONTROL}):
            raw = try_gpt2_to_bytes(tokens[i])
            if raw is not None:
                self.bytes_id.setdefault(raw, i)
            decoded[i] = tokens[i].encode("utf-8", "replace")
        for i in unspelled:
            decoded[i] = decode_like_llama_cpp(tokens[i])
        for i, kind in enumerate(types):
            if kind == TOKEN_UNUSED and i not in added_ids:
                decoded[i] = b""
        return decoded

    def _pair(self, left: int, right: int) -> int:
        """What merging two ids makes, packed for :func:`bpe_rank_chunks` and memoised there."""
        a, b = self.id_bytes[left], self.id_bytes[right]
        rank = self.rank(a, b)
        if rank is None:
            value = -1
        else:
            made = self.bytes_id.get(a + b)
            value = (rank << 24) | (NO_TOKEN if made is None else made)
        self._pairs[(left << 24) | right] = value
        return value

    def _byte_id(self, value: int, word: str) -> int:
        token = self.bytes_id.get(bytes([value]))
        if token is None:
            raise LabkitError(f"{self.name}: byte 0x{value:02X} in {word!r} has no token in this vocabulary")
        return token

    def merge_trace(self, word: str, *, naive: bool = False) -> MergeTrace:
        """The merges BPE makes on one pre-token, step by step (for ``labkit.viz.merges``).

        Example:
            >>> import labkit
            >>> labkit.load("gpt2", engine="labkit").merge_trace(" lower").steps[0].merged
            b'er'
        """
        trace = MergeTrace()
        self.word_ids(word, naive=naive, trace=trace)
        return trace

    def _word_entry(self, word: str):
        if self._missing and not self._missing.isdisjoint(word.encode("utf-8")):
            entry = tuple(self._pieces_with_missing_bytes(word))
            if len(word) <= CACHED_WORD_CHARS:  # a long word's spans would fill the cache
                self._cache[word] = entry
            return entry
        ids = self.word_ids(word)
        spans = char_spans(word, [len(self.id_bytes[token]) for token in ids])
        # a one-token word (the common case) is cached as its bare id: its span is the word
        entry = ids[0] if len(ids) == 1 else tuple((t, s, e) for t, (s, e) in zip(ids, spans))
        if len(word) <= CACHED_WORD_CHARS:
            self._cache[word] = entry
        return entry

    def clear_cache(self) -> None:
        """Empty the word caches (for cold-cache measurements)."""
        self._cache.clear()
        self._ids_cache.clear()

    # -- LabkitTokenizer -----------------------------------------------------
    def _encode_segment(self, text: str, context: SegmentContext) -> list[tuple[int, int, int]]:
        mapping = None
        if self.nfc and not unicodedata.is_normalized("NFC", text):
            # only a text that NFC changes pays for the offset map
            text, mapping = nfc_aligned(text, self.vocab)
        out: list[tuple[int, int, int]] = []
        append = out.append
        cache = self._cache
        pos = 0
        for word in self.pre.split_normalized(text):
            entry = cache.get(word)
            if entry is None:
                entry = self._word_entry(word)
            end = pos + len(word)
            if entry.__class__ is int:
                append((entry, pos, end))
            else:
                for token, s, e in entry:
                    append((token, pos + s, pos + e))
            pos = end
        if mapping is not None:
            out = [(t, mapping[s][0], mapping[e - 1][1]) for t, s, e in out]
        return out

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text`` with no added-token matching and no BOS/EOS (the fast path).

        Example:
            >>> import labkit
            >>> labkit.load("gpt2", engine="labkit").encode_ordinary("Hello world")
            [15496, 995]
        """
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode_ordinary() takes str, got {type(text).__name__}")
        return self._segment_ids(text, None)

    def _segment_ids(self, text: str, context: SegmentContext | None) -> list[int]:
        # ids only, through the ids cache: what encode() gives when offsets are not read
        if self.nfc:
            text = self.pre.normalize(text)
        out: list[int] = []
        extend = out.extend
        cache = self._ids_cache
        for word in self.pre.split_normalized(text):
            ids = cache.get(word)
            if ids is None:
                ids = tuple(self.word_ids(word))
                if len(word) <= CACHED_WORD_CHARS:
                    cache[word] = ids
            extend(ids)
        return out

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        if skip_special_tokens:
            ids = self._drop_special(ids)
        return b"".join(map((self.decoded_bytes or self.id_bytes).__getitem__, ids)).decode("utf-8", "replace")

    def token_bytes_of(self, index: int) -> bytes:
        """The raw bytes of one id (added tokens: their UTF-8 text).

        Example:
            >>> import labkit
            >>> labkit.load("gpt2", engine="labkit").token_bytes_of(995)
            b' world'
        """
        (index,) = self._check_ids([index])
        return (self.decoded_bytes or self.id_bytes)[index]


def build(vocab: VocabData) -> ByteLevelBPE:
    """Factory entry (``LABKIT_ENGINES["bpe_byte"]``): a ByteLevelBPE over ``vocab``.

    Example:
        >>> from labkit.engines.labkit_bpe_byte import build
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> build(read_gguf(bundled_path("qwen2"))).engine
        'labkit'
    """
    if vocab.model != MODEL_BPE_BYTE:
        raise EngineUnavailable(f"{vocab.name}: the byte-level BPE engine serves model 'bpe_byte', not {vocab.model!r}")
    if vocab.options.get("dna_kmers"):  # the factory builds labkit.engines.labkit_llama_hybriddna's engine
        raise EngineUnavailable(f"{vocab.name}: a hybriddna GGUF also reads DNA as k-mers, which this engine does not")
    if vocab.options.get("byte_encode") is False:  # a GGUF BPE over raw UTF-8 (Gemma 4): an engine of its own
        from labkit.engines.labkit_llama_bpe_utf8 import build as utf8_build

        return utf8_build(vocab)
    if vocab.merges is None and vocab.token_bytes is None:
        raise EngineUnavailable(f"{vocab.name}: byte-level BPE needs merges or token ranks, this vocab has neither")
    return ByteLevelBPE(vocab)
