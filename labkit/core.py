"""The shared vocabulary of labkit: errors, the reader's plain data, Encoding, and the
Tokenizer surface every engine implements.

Data flows one way: file -> reader (a :class:`VocabData`, plain data) -> engine (a
:class:`Tokenizer` subclass). Streaming, stop sequences, chat templates and the cache sit on
top of the Tokenizer surface and never reach into an engine.

Introduced in notebook ``00_tour``; the readers in ``11_factory_formats_hub``.
"""
from __future__ import annotations

import dataclasses
import operator
import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from labkit import metrics as _metrics

# ----------------------------------------------------------------------------- errors


class LabkitError(Exception):
    """Every failure on bad input is this (or a subclass), with a message saying what and where.

    Example:
        >>> from labkit.core import LabkitError
        >>> raise LabkitError("ggml-vocab-gpt-2.gguf: truncated at byte 1024 (key 'tokenizer.ggml.tokens')")
        Traceback (most recent call last):
            ...
        labkit.core.LabkitError: ggml-vocab-gpt-2.gguf: truncated at byte 1024 (key 'tokenizer.ggml.tokens')
    """


class FormatError(LabkitError):
    """A file could not be read: truncated, corrupt, wrong type or unknown format."""


class EngineUnavailable(LabkitError):
    """The asked-for engine cannot serve this file (the message says which engines can)."""


def library_failure(exc: BaseException) -> bool:
    """True for an error raised inside a reference library: any Exception, or a Rust panic, which
    pyo3 raises as ``pyo3_runtime.PanicException``, a BaseException (``except Exception`` misses it).

    Example:
        >>> from labkit.core import library_failure
        >>> library_failure(ValueError())
        True
        >>> library_failure(KeyboardInterrupt())
        False
    """
    return isinstance(exc, Exception) or type(exc).__name__ == "PanicException"


# ----------------------------------------------------------------------------- token types

# sentencepiece's numbering, also used by GGUF ``tokenizer.ggml.token_type``
TOKEN_NORMAL = 1
TOKEN_UNKNOWN = 2
TOKEN_CONTROL = 3
TOKEN_USER_DEFINED = 4
TOKEN_UNUSED = 5
TOKEN_BYTE = 6

TOKEN_TYPE_NAMES = {
    TOKEN_NORMAL: "normal",
    TOKEN_UNKNOWN: "unknown",
    TOKEN_CONTROL: "control",
    TOKEN_USER_DEFINED: "user_defined",
    TOKEN_UNUSED: "unused",
    TOKEN_BYTE: "byte",
}

# The model families labkit knows. A reader sets VocabData.model to one of these.
MODEL_BPE_BYTE = "bpe_byte"      # GPT-2 style byte-level BPE with ranks/merges (gpt2, qwen2, cl100k, llama3)
MODEL_SPM_BPE = "spm_bpe"        # SentencePiece score BPE with '▁' and <0xNN> byte fallback
MODEL_WORDPIECE = "wordpiece"    # BERT WordPiece with '##' continuations
MODEL_UNIGRAM = "unigram"        # SentencePiece Unigram (trie, lattice, Viterbi)
MODEL_WORDLEVEL = "wordlevel"    # a whole-word lookup table (tokenizer.json only)
MODEL_SPM_WORD = "spm_word"      # SentencePiece word model: whole '▁'-words or unk
MODEL_SPM_CHAR = "spm_char"      # SentencePiece char model: one piece per character
MODEL_RWKV = "rwkv"              # RWKV's "world" vocabulary: greedy longest match over bytes (GGUF only)
MODEL_PLAMO2 = "plamo2"          # PLaMo-2: the cheapest cut by integer scores, bytes for the rest (GGUF only)
MODELS = (MODEL_BPE_BYTE, MODEL_SPM_BPE, MODEL_WORDPIECE, MODEL_UNIGRAM, MODEL_WORDLEVEL, MODEL_SPM_WORD, MODEL_SPM_CHAR,
          MODEL_RWKV, MODEL_PLAMO2)


# ----------------------------------------------------------------------------- plain data


@dataclass(frozen=True)
class AddedToken:
    """A token matched in the raw text before the model runs (special or user-defined).

    Example:
        >>> from labkit.core import AddedToken
        >>> AddedToken("<|im_end|>", 151645, special=True)
        AddedToken(content='<|im_end|>', id=151645, special=True, normalized=False, lstrip=False, rstrip=False, single_word=False)
    """

    content: str
    id: int
    special: bool = True
    normalized: bool = False  # True: matched after normalisation (HF semantics)
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False


@dataclass
class SpecialTokens:
    """Named special tokens of a model, their ids, and whether BOS/EOS are added.

    Example:
        >>> import labkit
        >>> labkit.load("gpt2").special_tokens.eos_id
        50256
    """

    bos: str | None = None
    eos: str | None = None
    unk: str | None = None
    pad: str | None = None
    sep: str | None = None
    cls: str | None = None
    mask: str | None = None
    bos_id: int | None = None
    eos_id: int | None = None
    unk_id: int | None = None
    pad_id: int | None = None
    sep_id: int | None = None
    cls_id: int | None = None
    mask_id: int | None = None
    eos_ids: tuple[int, ...] = ()  # every id that ends generation (eos plus extras such as eot/eom)
    add_bos: bool = False
    add_eos: bool = False
    # CLS ... SEP framing for BERT-style models when add_special_tokens=True
    add_cls_sep: bool = False

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def named(self) -> dict[str, str]:
        """The named tokens that are set, e.g. {'bos_token': '<s>', 'eos_token': '</s>'}."""
        out = {}
        for name in ("bos", "eos", "unk", "pad", "sep", "cls", "mask"):
            value = getattr(self, name)
            if value is not None:
                out[f"{name}_token"] = value
        return out


def hole_spelling(index: int) -> str:
    """The placeholder a reader gives an id its file skips (a hole): no text spells it.

    Example:
        >>> from labkit.core import hole_spelling
        >>> hole_spelling(7)
        '<|unused_7|>'
    """
    return f"<|unused_{index}|>"


def hole_ids(vocab: "VocabData") -> frozenset[int]:
    """The ids with no token in a tokenizers file (vocab.json, vocab.txt, tokenizer.json): the
    readers' UNUSED placeholders. ``tokenizers`` has no token there and drops them in decode.

    Example:
        >>> from labkit.core import TOKEN_NORMAL, TOKEN_UNUSED, VocabData, hole_ids
        >>> vocab = VocabData("vocab.txt", "vocab_txt", "wordpiece", ["a", "<|unused_1|>"], [TOKEN_NORMAL, TOKEN_UNUSED])
        >>> sorted(hole_ids(vocab))
        [1]
    """
    if vocab.format not in ("vocab_merges", "vocab_txt", "hf_json"):
        return frozenset()
    return frozenset(i for i, (token, kind) in enumerate(zip(vocab.tokens, vocab.token_types))
                     if kind == TOKEN_UNUSED and token == hole_spelling(i))


@dataclass
class VocabData:
    """What a reader hands to an engine: plain data, no behaviour.

    Fields every reader fills:
      source        where it came from (a path, for messages)
      format        "gguf" | "hf_json" | "spm_model" | "tiktoken" | "vocab_merges" | "mock"
      model         one of MODELS
      tokens        id -> token string, in the model's own spelling (GPT-2 byte-unicode for
                    bpe_byte, '▁' for SentencePiece, '##x' for WordPiece continuations)
      token_types   id -> TOKEN_* (sentencepiece numbering); NORMAL where the format has none
    Filled where the format has them:
      scores        id -> float (SentencePiece BPE and Unigram)
      merges        list of (left, right) in rank order (byte-level BPE; HF/GGUF spelling)
      token_bytes   id -> raw bytes of the token (byte-level BPE; tiktoken's native form);
                    None for ids that are not byte sequences (specials); b"" for an id a
                    tokenizers file skips (a hole: no token, decodes to nothing)
      pre           pre-tokenizer name in llama.cpp's vocabulary ("gpt-2", "qwen2", "llama3",
                    "cl100k", ...) for bpe_byte
      normalizer    dict describing normalisation, keys as relevant:
                      nfc: bool
                      charsmap: bytes (sentencepiece precompiled charsmap) | None
                      add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces,
                      treat_whitespace_as_suffix: bool (sentencepiece)
                      lowercase, strip_accents, clean_text, handle_chinese_chars: bool (BERT)
      options       model options: byte_fallback (bool), ignore_merges (bool),
                    max_input_chars_per_word (int), continuing_subword_prefix (str),
                    unk_token (str), fuse_unk (bool), reserved_spellings_first (bool: a
                    spelling shared with a control, unknown or byte piece names that piece's
                    id, as sentencepiece's PieceToId does), ...
      specials      a SpecialTokens
      added_tokens  tokens matched in raw text before the model (specials, user-defined)
      chat_template str | None: the default chat template (``chat_templates["default"]``)
      chat_templates {name: template} found by the reader (formats/hf_config.py), and
      chat_template_origin  the file (and key) they came from
      metadata      format-specific extras (GGUF key/values, the tokenizer.json dict,
                    tokenizer_config.json, ...), for inspection only
    """

    source: str
    format: str
    model: str
    tokens: list[str]
    token_types: list[int]
    scores: list[float] | None = None
    merges: list[tuple[str, str]] | None = None
    token_bytes: list[bytes | None] | None = None
    pre: str | None = None
    normalizer: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    specials: SpecialTokens = field(default_factory=SpecialTokens)
    added_tokens: list[AddedToken] = field(default_factory=list)
    chat_template: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    chat_templates: dict[str, str] = field(default_factory=dict)
    chat_template_origin: str | None = None

    def __post_init__(self) -> None:
        if self.chat_template is not None and not self.chat_templates:
            self.chat_templates = {"default": self.chat_template}

    @property
    def name(self) -> str:
        import os

        return os.path.basename(str(self.source).rstrip("/")) or str(self.source)


# ----------------------------------------------------------------------------- encoding


class Encoding:
    """The result of ``encode``: ids, their token strings and (start, end) char offsets.

    ``tokens`` and ``offsets`` may be given as lists or as zero-argument functions that make
    them: an engine passes functions so that a caller who reads only ``ids`` never pays for
    offsets; each is computed once, on first access (notebook ``12_performance``).

    Example:
        >>> import labkit
        >>> labkit.load("gpt2").encode("Hello world").ids
        [15496, 995]
    """

    __slots__ = ("ids", "_tokens", "_offsets")

    def __init__(self, ids: list[int], tokens=None, offsets=None):
        self.ids = ids
        self._tokens = tokens
        self._offsets = offsets

    @property
    def tokens(self) -> list[str]:
        value = self._tokens
        if callable(value):
            value = self._tokens = value()
        return value

    @tokens.setter
    def tokens(self, value) -> None:
        self._tokens = value

    # offsets are made on first read exactly as tokens are above: two properties, one pattern
    @property
    def offsets(self) -> list[tuple[int, int]]:
        value = self._offsets
        if callable(value):
            value = self._offsets = value()
        return value

    @offsets.setter
    def offsets(self, value) -> None:
        self._offsets = value

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self):
        return iter(self.ids)

    def __eq__(self, other) -> bool:
        if other.__class__ is not Encoding:
            return NotImplemented
        return (self.ids, self.tokens, self.offsets) == (other.ids, other.tokens, other.offsets)

    __hash__ = None  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        return f"Encoding(ids={self.ids!r}, tokens={self.tokens!r}, offsets={self.offsets!r})"


# ----------------------------------------------------------------------------- tokenizer


class Tokenizer:
    """The surface every engine offers (the public surface in the README). Subclasses implement the four
    ``_``-methods; argument checking and the shared conveniences live here.

    Example:
        >>> import labkit
        >>> tok = labkit.load("qwen2")
        >>> tok.decode(tok.encode("héllo").ids)
        'héllo'
    """

    engine: str = "?"
    # why engine=None picked this engine (set by labkit.load; None when the engine was asked for)
    engine_note: str | None = None

    def __init__(self, vocab: VocabData, *, backend: Any = None):
        self.vocab = vocab
        self.backend = backend
        self._token_to_id: dict[str, int] | None = None
        self._chat_template_override: str | None = None

    # -- to implement --------------------------------------------------------
    def _encode(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        raise NotImplementedError

    def _decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        raise NotImplementedError

    # -- public surface ------------------------------------------------------
    @property
    def name(self) -> str:
        return self.vocab.name

    def encode(self, text: str, *, add_special_tokens: bool = False, parse_special: bool = True) -> Encoding:
        """Text -> Encoding. ``parse_special`` matches special-token spellings as single ids."""
        if not isinstance(text, str):
            raise LabkitError(f"{self.name}: encode() takes str, got {type(text).__name__}")
        if not text.isascii():
            _refuse_surrogates(self.name, text)
        return self._encode_recorded(text, bool(add_special_tokens), bool(parse_special))

    def _encode_recorded(self, text: str, add_special_tokens: bool, parse_special: bool) -> Encoding:
        """``_encode``, timed into the metrics when they are enabled (the one place that records)."""
        if not _metrics.ENABLED:
            return self._encode(text, add_special_tokens, parse_special)
        started = time.perf_counter()
        enc = self._encode(text, add_special_tokens, parse_special)
        _metrics.record_encode(self, time.perf_counter() - started, len(enc.ids), len(text))
        return enc

    def encode_batch(self, texts: Iterable[str], **kwargs) -> list[Encoding]:
        """Encode each text; same keyword arguments as :meth:`encode`."""
        return [self.encode(text, **kwargs) for text in self._check_texts(texts)]

    def _check_texts(self, texts: Iterable[str]) -> list[str]:
        """encode_batch's argument as a list of str, else LabkitError naming the bad item
        (an engine with its own batch path calls this before encoding anything)."""
        if isinstance(texts, (str, bytes, bytearray)) or not isinstance(texts, Iterable):
            raise LabkitError(f"{self.name}: encode_batch() takes a list of str, got {type(texts).__name__}")
        out = []
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise LabkitError(f"{self.name}: encode_batch() item {index} is {type(text).__name__}, not str")
            if not text.isascii():
                _refuse_surrogates(self.name, text)
            out.append(text)
        return out

    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> str:
        """Ids -> text; invalid UTF-8 becomes U+FFFD. Unknown ids raise LabkitError."""
        ids = self._check_ids(ids)
        if not _metrics.ENABLED:
            return self._decode(ids, bool(skip_special_tokens))
        started = time.perf_counter()
        text = self._decode(ids, bool(skip_special_tokens))
        _metrics.record_decode(self, time.perf_counter() - started)
        return text

    @property
    def vocab_size(self) -> int:
        return len(self.vocab.tokens)

    @property
    def special_tokens(self) -> SpecialTokens:
        return self.vocab.specials

    def token_to_id(self, token: str) -> int | None:
        """The id of a token spelling (the model's own spelling), None if it is not in the vocab."""
        if not isinstance(token, str):
            raise LabkitError(f"{self.name}: token_to_id() takes a token spelling (str), got {type(token).__name__}")
        if self._token_to_id is None:
            table: dict[str, int] = {}
            for i, t in enumerate(self.vocab.tokens):
                table.setdefault(t, i)
            for added in self.vocab.added_tokens:
                table[added.content] = added.id
            if self.vocab.options.get("reserved_spellings_first"):
                # a spelling that is also an ordinary or user-defined piece names the reserved id
                for i, (t, kind) in enumerate(zip(self.vocab.tokens, self.vocab.token_types)):
                    if kind in (TOKEN_CONTROL, TOKEN_UNKNOWN, TOKEN_BYTE):
                        table[t] = i
            self._token_to_id = table
        return self._token_to_id.get(token)

    def id_to_token(self, index: int) -> str:
        """The spelling of one id; an id outside the vocab raises LabkitError."""
        return self.vocab.tokens[self._check_id(index)]

    def is_special_id(self, index: int) -> bool:
        """True for control/special ids (what skip_special_tokens removes)."""
        if type(index) is int and index >= 0:
            try:
                return self.vocab.token_types[index] == TOKEN_CONTROL or index in self._special_ids()
            except IndexError:
                pass
        return self.is_special_id(self._check_id(index))  # raises LabkitError for what is not an id

    def _special_ids(self) -> frozenset[int]:
        cached = getattr(self, "_special_id_set", None)
        if cached is None:
            cached = frozenset(a.id for a in self.vocab.added_tokens if a.special)
            self._special_id_set = cached
        return cached

    @property
    def chat_template(self) -> str | None:
        """The default chat template: one set on this tokenizer, else the one its reader found
        at load (formats/hf_config.py applies transformers' priority), else None."""
        if self._chat_template_override is not None:
            return self._chat_template_override
        return self.vocab.chat_template

    @chat_template.setter
    def chat_template(self, value: str | None) -> None:
        if value is not None and not isinstance(value, str):
            raise LabkitError(
                f"{self.name}: chat_template takes template text (str) or None, got {type(value).__name__}; "
                "for a .jinja file pass apply_chat_template(..., chat_template=path)"
            )
        self._chat_template_override = value

    def apply_chat_template(self, messages, *, add_generation_prompt: bool = False, **kwargs) -> str:
        """Render a conversation with this model's chat template (see labkit.chat)."""
        # the one import of an upper layer in core, done lazily: rendering lives in labkit.chat
        from labkit.chat.encode import apply_chat_template

        return apply_chat_template(self, messages, add_generation_prompt=add_generation_prompt, **kwargs)

    def __repr__(self) -> str:
        head = f"<labkit.Tokenizer {self.name} model={self.vocab.model} engine={self.engine} vocab_size={self.vocab_size}>"
        return f"{head[:-1]} ({self.engine_note})>" if self.engine_note else head

    def decode_unchecked(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        """:meth:`decode` for ids that already passed :meth:`check_ids` (a stream checks each id
        once, on arrival, then decodes short windows of them many times).

        Example:
            >>> import labkit
            >>> tok = labkit.load("qwen2")
            >>> tok.decode_unchecked(tok.check_ids([9707]))
            'Hello'
        """
        if type(self).decode is not Tokenizer.decode:  # an engine with its own decode keeps it
            return self.decode(ids, skip_special_tokens=skip_special_tokens)
        return self._decode(ids, bool(skip_special_tokens))

    def check_id(self, index, where: str = "") -> int:
        """One id as a plain int inside the vocab, else LabkitError naming it (and ``where``).

        Example:
            >>> import numpy
            >>> import labkit
            >>> tok = labkit.load("qwen2")
            >>> tok.check_id(numpy.int64(42))
            42
        """
        return self._check_id(index, where)

    def check_ids(self, ids: Sequence[int], what: str = "ids") -> list[int]:
        """Every id checked (see :meth:`check_id`) before any is used, as a new list of ints;
        ``what`` names the argument in the error (a bad id part-way through raises before the
        ids ahead of it are consumed, and lost).

        Example:
            >>> import labkit
            >>> tok = labkit.load("qwen2")
            >>> tok.check_ids([9707, 1879], "step_batch()")
            [9707, 1879]
        """
        checked = self._check_ids(ids, what)
        return list(checked) if checked is ids else checked  # a new list: callers may append to it

    # -- helpers for engines -------------------------------------------------
    def _check_id(self, index, where: str = "") -> int:
        """One id as a plain int inside the vocab, else LabkitError naming it (and ``where``)."""
        if type(index) is not int:
            if isinstance(index, bool):
                raise LabkitError(f"{self.name}: id {index!r}{where} is a bool, not an int")
            try:
                index = operator.index(index)  # int subclasses and numpy integers; never floats or str
            except TypeError:
                raise LabkitError(
                    f"{self.name}: id{where} must be an int, got {type(index).__name__} {_short(index)}"
                ) from None
        if not 0 <= index < len(self.vocab.tokens):
            raise LabkitError(f"{self.name}: unknown id {index}{where} (vocab size {len(self.vocab.tokens)})")
        return index

    def _check_ids(self, ids: Sequence[int], what: str = "ids") -> list[int]:
        """A list of ids as plain ints inside the vocab, else LabkitError naming the bad one."""
        if ids is None or isinstance(ids, (str, bytes, bytearray, dict)) or not isinstance(ids, Iterable):
            raise LabkitError(f"{self.name}: {what} must be a list of ints, got {type(ids).__name__} {_short(ids)}")
        n = len(self.vocab.tokens)
        if ids.__class__ is list and (not ids or (set(map(type, ids)) == {int} and min(ids) >= 0 and max(ids) < n)):
            return ids  # the common case, checked at C speed (the caller's list is not changed)
        out = []
        for pos, i in enumerate(ids):
            if type(i) is not int or not 0 <= i < n:
                i = self._check_id(i, f" at position {pos}")
            out.append(i)
        return out


def as_tokenizer(obj, who: str) -> Tokenizer:
    """``obj`` if it is a labkit Tokenizer, else LabkitError saying ``who`` needs one.

    Example:
        >>> from labkit.core import as_tokenizer
        >>> import labkit
        >>> as_tokenizer(labkit.load("gpt2"), "DecodeStream")
        <labkit.Tokenizer ggml-vocab-gpt-2.gguf model=bpe_byte engine=labkit vocab_size=50257 (engine=None picked 'labkit': it serves this file exactly)>
    """
    if not isinstance(obj, Tokenizer):
        raise LabkitError(f"{who} needs a labkit Tokenizer, got {type(obj).__name__}")
    return obj


_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_surrogates(name: str, text: str) -> None:
    """Lone surrogates have no UTF-8 form: every engine refuses them the same way."""
    found = _SURROGATE.search(text)
    if found is not None:
        raise LabkitError(
            f"{name}: text holds a lone surrogate U+{ord(found.group()):04X} at char {found.start()}, "
            "which is not valid Unicode (no UTF-8 form)"
        )


def _short(value) -> str:
    """A value's repr cut to a readable length, for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
