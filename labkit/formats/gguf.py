"""Read the key/value header of a GGUF file fast, and turn its ``tokenizer.ggml.*`` keys
into VocabData.

``gguf.GGUFReader`` builds every string of a 150k-token array field by field (15-25 s);
reading the header with ``struct`` directly takes well under a second. The constants
(value types, key names, magic) come from the ``gguf`` package.
Introduced in notebook ``11_factory_formats_hub`` (GGUF anatomy).

Example:
    >>> from labkit.formats.gguf import read_gguf_kv
    >>> read_gguf_kv("data/gguf/ggml-vocab-gpt-2.gguf")["tokenizer.ggml.model"]
    'gpt2'
"""
from __future__ import annotations

import mmap
import os
import struct
from array import array
from typing import Any

import gguf
from gguf import GGUFValueType as VT

from labkit.algorithms.llama_bpe_utf8 import GEMMA4_MODEL_RULES, UTF8_BPE_RULES
from labkit.algorithms.pretokenize import NOT_LLAMA_CPP_NAMES
from labkit.core import (
    TOKEN_BYTE,
    TOKEN_CONTROL,
    TOKEN_NORMAL,
    TOKEN_UNKNOWN,
    TOKEN_USER_DEFINED,
    AddedToken,
    FormatError,
    SpecialTokens,
    VocabData,
)
from labkit.formats.files import SIZE_LIMITS
from labkit.formats.gguf_attributes import (CONTROL, LSTRIP, NORMAL, RSTRIP, USER_DEFINED, TokenAttributes,
                                            llama_cpp_attributes)
from labkit.formats.hf_config import GGUF_TEMPLATE_KEY, gguf_templates, set_chat_templates

TK = gguf.Keys.Tokenizer

# scalar value type -> struct format (little-endian)
_SCALAR = {
    VT.UINT8: "<B", VT.INT8: "<b", VT.UINT16: "<H", VT.INT16: "<h",
    VT.UINT32: "<I", VT.INT32: "<i", VT.FLOAT32: "<f", VT.BOOL: "<?",
    VT.UINT64: "<Q", VT.INT64: "<q", VT.FLOAT64: "<d",
}
# numeric arrays are read in one go with the array module
_ARRAY_CODE = {
    VT.UINT8: "B", VT.INT8: "b", VT.UINT16: "H", VT.INT16: "h",
    VT.UINT32: "I", VT.INT32: "i", VT.FLOAT32: "f", VT.UINT64: "Q",
    VT.INT64: "q", VT.FLOAT64: "d",
}
_MAX_DEPTH = 4  # arrays of arrays are legal; deeper nesting is a corrupt file
# the array-valued keys gguf_to_vocab reads; any other array is skipped, never built
_ARRAYS_USED = frozenset({TK.LIST, TK.TOKEN_TYPE, TK.SCORES, TK.MERGES, TK.PRECOMPILED_CHARSMAP})


class SkippedArray(tuple):
    """Stands for an array under a key labkit does not read: (item type, count), never built.

    Example:
        >>> SkippedArray("UINT8", 100_000_000)
        ('UINT8', 100000000)
    """

    def __new__(cls, item_type: str, count: int):
        return super().__new__(cls, (item_type, count))


class _Cursor:
    """A bounds-checked reader over the file's bytes; every overrun names the key."""

    def __init__(self, data: bytes, source: str):
        self.data = data
        self.pos = 0
        self.source = source
        self.key = "(header)"

    def fail(self, what: str) -> FormatError:
        return FormatError(f"{self.source}: {what} at byte {self.pos} (key {self.key!r})")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"truncated: needs {n} more bytes, {len(self.data) - self.pos} left")
        # a copy, not a view: the data may be an mmap that is closed after reading
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def scalar(self, vtype: VT):
        fmt = _SCALAR[vtype]
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise self.fail("truncated scalar")
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def u32(self) -> int:
        return self.scalar(VT.UINT32)

    def u64(self) -> int:
        return self.scalar(VT.UINT64)

    def string(self) -> str:
        n = self.u64()
        raw = self.take(n)
        try:
            return str(raw, "utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"string is not valid UTF-8 ({exc.reason})") from None

    def value_type(self) -> VT:
        code = self.u32()
        try:
            return VT(code)
        except ValueError:
            raise self.fail(f"unknown value type {code}") from None

    def skip_array(self) -> "SkippedArray":
        """Step over an array without building it (a key labkit does not use)."""
        item_type = self.value_type()
        count = self.u64()
        left = len(self.data) - self.pos
        if item_type in _ARRAY_CODE or item_type == VT.BOOL:
            size = count * (struct.calcsize(_ARRAY_CODE[item_type]) if item_type in _ARRAY_CODE else 1)
            if size > left:
                raise self.fail(f"truncated array of {count} items")
            self.pos += size
        elif item_type == VT.STRING:
            if count * 8 > left:
                raise self.fail(f"array of {count} items cannot fit in {left} bytes")
            for index in range(count):
                n = self.u64()
                if n > len(self.data) - self.pos:
                    raise self.fail(f"truncated in string {index} of {count}")
                self.pos += n
        else:  # arrays of arrays: rare, small; read and drop
            if count * 12 > left:
                raise self.fail(f"array of {count} items cannot fit in {left} bytes")
            for _ in range(count):
                self.value(item_type, 1)
        return SkippedArray(item_type.name, count)

    def value(self, vtype: VT, depth: int = 0) -> Any:
        if vtype == VT.STRING:
            return self.string()
        if vtype in _SCALAR:
            return self.scalar(vtype)
        if vtype == VT.ARRAY:
            if depth >= _MAX_DEPTH:
                raise self.fail("arrays nested too deeply")
            item_type = self.value_type()
            count = self.u64()
            left = len(self.data) - self.pos
            if item_type in _ARRAY_CODE:
                out = array(_ARRAY_CODE[item_type])
                if count * out.itemsize > left:
                    raise self.fail(f"truncated array of {count} items")
                out.frombytes(self.take(count * out.itemsize))
                return out.tolist()
            if item_type == VT.BOOL:
                return [bool(b) for b in self.take(count)]
            # strings need at least 8 bytes each: a corrupt count fails before a long loop
            if count * 8 > left:
                raise self.fail(f"array of {count} items cannot fit in {left} bytes")
            if item_type == VT.STRING:
                return self._string_array(count)
            return [self.value(item_type, depth + 1) for _ in range(count)]
        raise self.fail(f"unexpected value type {vtype}")

    def _string_array(self, count: int) -> list[str]:
        # the fast pass slices every string without a check per item (151k tokens, 151k merges):
        # a string past the end or invalid UTF-8 sends it to the careful pass, which says where
        data, start, end = self.data, self.pos, len(self.data)
        unpack, pos, pieces = struct.unpack_from, start, []
        append = pieces.append
        try:
            for _ in range(count):
                (n,) = unpack("<Q", data, pos)
                append(data[pos + 8 : pos + 8 + n])
                pos += 8 + n
            if pos <= end:
                self.pos = pos
                return list(map(bytes.decode, pieces))  # UTF-8, strict
        except (struct.error, OverflowError, UnicodeDecodeError):  # past the end, or not UTF-8
            pass
        return self._string_array_checked(count, start)

    def _string_array_checked(self, count: int, pos: int) -> list[str]:
        """The string array item by item: the first bad string raises, naming its index."""
        data, end = self.data, len(self.data)
        out = []
        for index in range(count):
            if pos + 8 > end:
                self.pos = pos
                raise self.fail(f"truncated in string {index} of {count}")
            (n,) = struct.unpack_from("<Q", data, pos)
            pos += 8
            if pos + n > end:
                self.pos = pos
                raise self.fail(f"truncated in string {index} of {count}")
            try:
                out.append(data[pos : pos + n].decode("utf-8"))
            except UnicodeDecodeError as exc:
                self.pos = pos
                raise self.fail(f"string {index} is not valid UTF-8 ({exc.reason})") from None
            pos += n
        self.pos = pos
        return out


def read_gguf_kv(path, data: bytes | None = None) -> dict[str, Any]:
    """Read every key/value pair of a GGUF file's header into a dict: the tokenizer's arrays
    as lists, any other array as a SkippedArray (its type and length; never built).

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> len(read_gguf_kv(data_path("gguf/ggml-vocab-qwen2.gguf"))["tokenizer.ggml.tokens"])
        151936

    Introduced in notebook ``11_factory_formats_hub``.
    """
    source = str(path)
    if data is not None:
        return _read_kv(data, source)
    # map the file instead of reading it: a full model GGUF is gigabytes of tensors after
    # a header of a few megabytes, and only the header is read
    window = SIZE_LIMITS["gguf header"]
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                raise FormatError(f"{source}: file is empty")
            # a bounded window: a 4 GB model maps 256 MiB of address space, not 4 GB
            with mmap.mmap(handle.fileno(), min(size, window), access=mmap.ACCESS_READ) as mapped:
                try:
                    return _read_kv(mapped, source)
                except FormatError as exc:
                    if size > window and ("truncated" in str(exc) or "cannot fit" in str(exc)):
                        raise FormatError(f"{source}: the GGUF header runs past its first {window:,} bytes, "
                                          "all labkit reads of a GGUF (tokenizer metadata takes a few MB)") from None
                    raise
    except OSError as exc:
        raise FormatError(f"{source}: cannot read ({exc.strerror or exc})") from None


def _read_kv(data, source: str) -> dict[str, Any]:
    cur = _Cursor(data, source)
    if len(data) < 4 or struct.unpack_from("<I", data, 0)[0] != gguf.GGUF_MAGIC:
        raise FormatError(f"{source}: not a GGUF file (magic is {bytes(data[:4])!r}, expected b'GGUF')")
    cur.pos = 4
    version = cur.u32()
    if version not in (2, 3):
        raise cur.fail(f"unsupported GGUF version {version} (labkit reads 2 and 3)")
    tensor_count = cur.u64()
    kv_count = cur.u64()
    if kv_count > len(data) // 12:  # each pair needs at least a key length and a type
        raise cur.fail(f"header claims {kv_count} key/value pairs, more than the file can hold")
    kv: dict[str, Any] = {"GGUF.version": version, "GGUF.tensor_count": tensor_count, "GGUF.kv_count": kv_count}
    for index in range(kv_count):
        cur.key = f"(key #{index})"
        key = cur.string()
        cur.key = key
        vtype = cur.value_type()
        if vtype == VT.ARRAY and key not in _ARRAYS_USED:
            # only the tokenizer's own arrays are ever used: a 100 MB array elsewhere is stepped over
            kv[key] = cur.skip_array()
        else:
            kv[key] = cur.value(vtype)
    return kv


# --------------------------------------------------------------------------- to VocabData

_VALID_TYPES = frozenset(range(1, 7))
# tokenizer.ggml.model -> labkit's model family (the engine that runs it: factory.LABKIT_ENGINES);
# "gemma4": llama.cpp's BPE over raw UTF-8 (labkit.algorithms.llama_bpe_utf8), read as a BPE vocabulary
# "whitespace": the same BPE on each run of non-space characters, the spaces dropped (jina-embeddings-v2-base-zh)
# "hybriddna": byte-level BPE, and DNA between <dna> and </dna> read as 6-mers (labkit.engines.labkit_llama_hybriddna)
GGUF_MODEL_FAMILIES = {"gpt2": "bpe_byte", "gemma4": "bpe_byte", "whitespace": "bpe_byte", "hybriddna": "bpe_byte",
                       "llama": "spm_bpe", "bert": "wordpiece", "t5": "unigram", "rwkv": "rwkv", "plamo2": "plamo2"}


def _get(kv: dict, key: str, kind: type, source: str, default=None):
    value = kv.get(key, default)
    if value is default:
        return value
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        raise FormatError(f"{source}: key {key!r} has type {type(value).__name__}, expected {kind.__name__}")
    return value


def _undo_phantom_space(token: str) -> str:
    """llama.cpp stores WordPiece 'w' as '▁w' and '##w' as 'w'; give back vocab.txt's spelling."""
    if token.startswith("\u2581"):
        return token[1:]
    if token.startswith("[") and token.endswith("]"):
        return token
    return "##" + token


def gguf_to_vocab(kv: dict[str, Any], source: str, *, pre: str | None = None) -> VocabData:
    """Turn GGUF key/values into VocabData (tokens, types, scores, merges, specials, flags),
    one helper per kind of record.

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.gguf import gguf_to_vocab, read_gguf_kv
        >>> p = data_path("gguf/ggml-vocab-gpt-2.gguf")
        >>> gguf_to_vocab(read_gguf_kv(p), str(p)).model
        'bpe_byte'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    ggml_model, family = _model_family(kv, source)
    tokens, types, scores = _token_arrays(kv, source)
    attributes = llama_cpp_attributes(kv, tokens, types, ggml_model, source)  # by the file's own spellings
    stored_types, types = types, _types_from(attributes, types)
    pre_name = pre if pre is not None else _get(kv, TK.PRE, str, source, None)
    if ggml_model == "gemma4" and pre is None:
        pre_name = GEMMA4_MODEL_RULES  # llama.cpp sets this split for the model, whatever the key says
    # llama.cpp's BPE over raw UTF-8 looks merges up by spelling: one naming no token never applies
    merges = _merges(kv, tokens, source, check=pre_name not in UTF8_BPE_RULES)
    spellings = tokens  # as the file spells them: llama.cpp matches these
    if family == "wordpiece":
        tokens = [_undo_phantom_space(t) for t in tokens]
    specials = _specials(kv, tokens, family, source, ggml_model)
    normalizer, options = _normalizer_and_options(kv, types, family, specials, source)
    if family == "bpe_byte" and pre_name is None:
        pre_name = "default"
    if family == "bpe_byte" and pre is None and pre_name in NOT_LLAMA_CPP_NAMES:
        raise FormatError(f"{source}: {TK.PRE!r} is {pre_name!r}, a name labkit gives a split but llama.cpp does not "
                          f"know, so llama.cpp does not load this file; to read it with that split anyway, pass "
                          f"pre={pre_name!r}")
    if family == "bpe_byte":
        _bpe_options(kv, ggml_model, pre_name, specials, options, source)
    if family == "plamo2":  # only decoding reads it
        options["add_space_prefix"] = bool(_get(kv, TK.ADD_PREFIX, bool, source, False))
    metadata = {k: v for k, v in kv.items() if not (isinstance(v, list) and len(v) > 64)}
    metadata["ggml_model"] = ggml_model
    if family == "wordpiece":
        options["gguf_spellings"] = spellings  # llama.cpp matches the phantom-space spellings
    if family == "unigram":
        # llama.cpp builds its t5 lattice from the stored types, before its load-time rules retype tokens
        options["lattice_token_types"] = list(stored_types)
        # ... but asks for the user-defined bit (score 0) when it encodes, after them: a
        # user-defined token made control keeps the bit, one made user-defined gains it
        options["score_token_types"] = [TOKEN_USER_DEFINED if attributes.flags[i] & USER_DEFINED
                                        else TOKEN_NORMAL if kind == TOKEN_USER_DEFINED else kind
                                        for i, kind in enumerate(stored_types)]
    vocab = VocabData(
        source=source,
        format="gguf",
        model=family,
        tokens=tokens,
        token_types=list(types),
        scores=[float(s) for s in scores] if scores is not None else None,
        merges=merges,
        token_bytes=None,
        pre=pre_name,
        normalizer=normalizer,
        options=options,
        specials=specials,
        added_tokens=_added_tokens(spellings, stored_types, attributes),  # llama.cpp matches the stored spellings
        chat_template=_get(kv, TK.CHAT_TEMPLATE, str, source, None),  # checks the key's type
        metadata=metadata,
    )
    templates = gguf_templates(kv)
    if templates:
        set_chat_templates(vocab, templates, f"{source}: {GGUF_TEMPLATE_KEY}")
    return vocab


# byte-level splits after which llama.cpp adds BOS when the file has no add_bos_token key (llama-vocab.cpp)
ADDS_BOS_BY_DEFAULT = frozenset({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                                 "jina-v5-nano", "tekken", "chameleon"})
# byte-level splits after which llama.cpp has no BOS id unless the file names one (the GLM models)
NO_DEFAULT_BOS = frozenset({"chatglm-bpe", "glm4", "glm5"})


def _bpe_options(kv: dict, ggml_model: str, pre_name: str, specials: SpecialTokens, options: dict, source: str) -> None:
    """What llama.cpp switches on for a BPE file by its split and tokenizer model: BOS added
    after the splits of :data:`ADDS_BOS_BY_DEFAULT` when the file has no add_bos_token key, and
    no BOS id after those of :data:`NO_DEFAULT_BOS` when it names none; for
    a split over raw UTF-8 (Gemma 4's ``<0xNN>`` byte tokens, ``▁`` for a space) ``byte_encode``
    off, BOS always added for Gemma 4, and the add_space_prefix key, which only its decoding
    reads. The "whitespace" tokenizer model drops every space first and lowercases where the
    file's key says (off when absent); "hybriddna" reads DNA between tags as k-mers."""
    if pre_name in ADDS_BOS_BY_DEFAULT and TK.ADD_BOS not in kv:
        specials.add_bos = True
    if pre_name in NO_DEFAULT_BOS and TK.BOS_ID not in kv:
        specials.bos = specials.bos_id = None
    rules = UTF8_BPE_RULES.get(pre_name)
    if ggml_model == "hybriddna":
        if rules is not None:
            # its converter writes the base model's byte-level split; k-mers over raw UTF-8 BPE are untested ground
            raise FormatError(f"{source}: tokenizer model 'hybriddna' with split {pre_name!r}, a BPE over raw UTF-8; "
                              "labkit serves it with a byte-level split, as its converter writes it")
        options["dna_kmers"] = True
    if ggml_model == "gemma4" and rules is None:
        # llama.cpp always reads this model with the gemma4 split: another one (pre=...) would spell nothing right
        raise FormatError(f"{source}: tokenizer model 'gemma4' with split {pre_name!r}; llama.cpp reads it with the "
                          "gemma4 split, and so does labkit")
    if ggml_model == "whitespace":
        if pre_name != "whitespace":
            # llama.cpp would drop the spaces and then run a byte-level split: a combination no converter writes
            raise FormatError(f"{source}: tokenizer model 'whitespace' with split {pre_name!r}; labkit serves it with "
                              "the 'whitespace' split its converter writes")
        options["drop_whitespace"] = True
        options["lowercase"] = bool(_get(kv, "tokenizer.ggml.normalizer.lowercase", bool, source, False))
    if rules is None:
        return
    options["byte_encode"] = False
    options["add_space_prefix"] = bool(_get(kv, TK.ADD_PREFIX, bool, source, False))
    if rules.gemma4:
        specials.add_bos = True


def _model_family(kv: dict, source: str) -> tuple[str, str]:
    """(tokenizer.ggml.model, labkit's model family); an unknown model is a FormatError."""
    ggml_model = _get(kv, TK.MODEL, str, source)
    if ggml_model is None:
        raise FormatError(f"{source}: GGUF file has no {TK.MODEL!r}: not a tokenizer vocabulary")
    family = GGUF_MODEL_FAMILIES.get(ggml_model)
    if family is None:
        raise FormatError(
            f"{source}: tokenizer model {ggml_model!r} is not supported; labkit reads {', '.join(sorted(GGUF_MODEL_FAMILIES))}"
        )
    return ggml_model, family


def _token_arrays(kv: dict, source: str) -> tuple[list[str], list[int], list | None]:
    """The tokens, their types (default: all normal) and scores, checked against each other."""
    tokens = _get(kv, TK.LIST, list, source)
    if not tokens:
        raise FormatError(f"{source}: {TK.LIST!r} is missing or empty")
    if not all(isinstance(t, str) for t in tokens[:1]):
        raise FormatError(f"{source}: {TK.LIST!r} must be an array of strings")
    n = len(tokens)
    if "" in tokens:
        # llama.cpp names an empty token "[EMPTY_<id>]" (with a warning) and serves the file
        tokens = [token or f"[EMPTY_{index}]" for index, token in enumerate(tokens)]
    if len(set(tokens)) != n:
        # llama.cpp aborts on such a file: llama-vocab.cpp asserts after loading the tokens that
        # its spelling -> id map is as long as its id -> spelling list
        first: dict[str, int] = {}
        for index, token in enumerate(tokens):
            if token in first:
                raise FormatError(f"{source}: duplicate token {token!r} has ids {first[token]} and {index}")
            first[token] = index
    types = _get(kv, TK.TOKEN_TYPE, list, source)
    if types is None:
        types = [TOKEN_NORMAL] * n
    if len(types) != n:
        raise FormatError(f"{source}: {TK.TOKEN_TYPE!r} has {len(types)} entries for {n} tokens")
    # GGUF arrays hold one type, so checking the distinct values is enough (and fast)
    if type(types[0]) is not int or not set(types) <= _VALID_TYPES:
        raise FormatError(f"{source}: {TK.TOKEN_TYPE!r} must hold integers 1..6")
    scores = _get(kv, TK.SCORES, list, source)
    if scores is not None:
        if len(scores) != n:
            raise FormatError(f"{source}: {TK.SCORES!r} has {len(scores)} entries for {n} tokens")
        if any(not isinstance(s, (int, float)) for s in scores[:1]):
            raise FormatError(f"{source}: {TK.SCORES!r} must be numbers")
    return tokens, types, scores


def _merges(kv: dict, tokens: list[str], source: str, check: bool = True) -> list[tuple[str, str]] | None:
    """The merges as (left, right) pairs, each naming tokens of the vocabulary (with ``check``)."""
    raw_merges = _get(kv, TK.MERGES, list, source)
    if raw_merges is None:
        return None
    if raw_merges and not isinstance(raw_merges[0], str):
        raise FormatError(f"{source}: {TK.MERGES!r} must be an array of strings")
    # cut at the first space after the first character, as llama.cpp does (a token may start with a space)
    cuts = [merge.find(" ", 1) for merge in raw_merges]
    if -1 in cuts:
        index = cuts.index(-1)
        raise FormatError(f"{source}: merge #{index} {raw_merges[index]!r} is not 'left right'")
    merges = [(merge[:cut], merge[cut + 1:]) for merge, cut in zip(raw_merges, cuts)]
    if check:
        _check_merges_name_tokens(merges, tokens, source)
    return merges


# llama.cpp's ids when the file names none (llama_vocab::impl::load), kept where inside the vocabulary
_DEFAULT_IDS = {"gpt2": {TK.BOS_ID: 11, TK.EOS_ID: 11}, "whitespace": {TK.BOS_ID: 11, TK.EOS_ID: 11},
                "hybriddna": {TK.BOS_ID: 11, TK.EOS_ID: 11},
                "llama": {TK.BOS_ID: 1, TK.EOS_ID: 2, TK.UNK_ID: 0},
                "bert": {TK.BOS_ID: 101, TK.UNK_ID: 100, TK.SEP_ID: 102, TK.PAD_ID: 0, TK.MASK_ID: 103},
                "t5": {TK.EOS_ID: 1, TK.UNK_ID: 2, TK.PAD_ID: 0},
                "plamo2": {TK.BOS_ID: 1, TK.EOS_ID: 2, TK.UNK_ID: 0, TK.PAD_ID: 3}}


# families whose llama.cpp tokenizer adds no BOS/EOS of its own (bert frames with [CLS]/[SEP] instead)
NEVER_FRAMED = ("wordpiece", "rwkv", "plamo2")


def _specials(kv: dict, tokens: list[str], family: str, source: str, ggml_model: str = "") -> SpecialTokens:
    """BOS/EOS/UNK/... ids (inside the vocabulary) and the add-BOS/EOS flags."""
    n = len(tokens)
    defaults = _DEFAULT_IDS.get(ggml_model, {})

    def special_id(key: str) -> int | None:
        value = _get(kv, key, int, source)
        if value is None:
            default = defaults.get(key)
            return default if default is not None and default < n else None
        if not 0 <= value < n:
            raise FormatError(f"{source}: {key!r} = {value} is outside the vocabulary (0..{n - 1})")
        return value

    ids = {name: special_id(key) for name, key in (
        ("bos", TK.BOS_ID), ("eos", TK.EOS_ID), ("unk", TK.UNK_ID), ("pad", TK.PAD_ID),
        ("sep", TK.SEP_ID), ("mask", TK.MASK_ID), ("eot", TK.EOT_ID), ("eom", TK.EOM_ID),
    )}
    if family == "wordpiece":
        # llama.cpp frames a bert text with its BOS id (the cls_token_id key it does not read)
        ids["cls"] = ids["bos"]
    eos_ids = tuple(dict.fromkeys(i for i in (ids["eos"], ids["eot"], ids["eom"]) if i is not None))
    add_bos_default = family == "spm_bpe"
    named = ("bos", "eos", "unk", "pad", "sep", "mask", "cls")
    specials = SpecialTokens(
        **{name: (tokens[i] if i is not None else None) for name, i in ids.items() if name in named},
        **{f"{name}_id": i for name, i in ids.items() if name in named},
        eos_ids=eos_ids,
        add_bos=bool(_get(kv, TK.ADD_BOS, bool, source, add_bos_default)) and family not in NEVER_FRAMED,
        # llama.cpp: a t5 model adds EOS unless the file says otherwise
        add_eos=bool(_get(kv, TK.ADD_EOS, bool, source, family == "unigram")) and family not in NEVER_FRAMED,
        add_cls_sep=family == "wordpiece",
    )
    if family != "wordpiece":
        specials.cls = specials.cls_id = None
    return specials


def _types_from(attributes: TokenAttributes, types: list[int]) -> list[int]:
    """One type per token from llama.cpp's attribute bits: control wins over user-defined
    (matched only with parse_special), which wins over the rest (byte and unused kept)."""
    out = list(types)
    for i in attributes.changed:
        flags = attributes.flags[i]
        if flags & CONTROL:
            out[i] = TOKEN_CONTROL
        elif flags & USER_DEFINED:
            out[i] = TOKEN_USER_DEFINED
        elif flags & NORMAL:
            out[i] = TOKEN_NORMAL
    return out


def _added_tokens(tokens: list[str], types: list[int], attributes: TokenAttributes) -> list[AddedToken]:
    """The tokens llama.cpp looks for in the text: control and unknown ones are special
    (matched only with parse_special), user-defined ones always; some swallow spaces."""
    flags = attributes.flags
    matched = {i for i, t in enumerate(types) if t in (TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED)}
    for i in attributes.changed:  # the few ids the rules re-typed
        if attributes.matched(i):
            matched.add(i)
        else:
            matched.discard(i)
    return [AddedToken(tokens[i], i, special=attributes.special(i), lstrip=bool(flags[i] & LSTRIP),
                       rstrip=bool(flags[i] & RSTRIP)) for i in sorted(matched)]


def _normalizer_and_options(kv: dict, types: list[int], family: str, specials: SpecialTokens,
                            source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The SentencePiece flags and charsmap (spm_bpe, unigram) or BERT's normaliser (wordpiece)."""
    normalizer: dict[str, Any] = {}
    options: dict[str, Any] = {}
    if family in ("spm_bpe", "unigram"):
        # llama.cpp: on for a llama model, off for t5, unless the file says otherwise
        normalizer["add_dummy_prefix"] = bool(_get(kv, TK.ADD_PREFIX, bool, source, family == "spm_bpe"))
        # llama.cpp reads the key, off when absent
        normalizer["remove_extra_whitespaces"] = bool(_get(kv, TK.REMOVE_EXTRA_WS, bool, source, False))
        if family == "spm_bpe":  # llama.cpp's "llama" tokenizer reads neither key (nor a charsmap)
            normalizer["remove_extra_whitespaces"] = False
        normalizer["escape_whitespaces"] = True
        normalizer["treat_whitespace_as_suffix"] = False
        # llama.cpp's t5 (Unigram) has no byte fallback: an unknown character is the unknown id
        options["byte_fallback"] = family == "spm_bpe" and any(t == TOKEN_BYTE for t in types)
        charsmap = _get(kv, TK.PRECOMPILED_CHARSMAP, list, source)
        # checked in C passes (a real charsmap holds about 140,000 bytes): plain ints, -128..255
        if charsmap and (not set(map(type, charsmap)) <= {int} or min(charsmap) < -128 or max(charsmap) > 255):
            raise FormatError(f"{source}: {TK.PRECOMPILED_CHARSMAP!r} must be an array of bytes (int8 or uint8)")
        # llama.cpp writes the charsmap as int8: map -128..-1 back to 128..255
        normalizer["charsmap"] = bytes(map((0xFF).__and__, charsmap)) if charsmap and family == "unigram" else None
    if family == "wordpiece":
        # llama.cpp's keys: lowercase (default on), strip_accents (default: as lowercase)
        lowercase = bool(_get(kv, "tokenizer.ggml.normalizer.lowercase", bool, source, True))
        strip_accents = bool(_get(kv, "tokenizer.ggml.normalizer.strip_accents", bool, source, lowercase))
        normalizer.update(lowercase=lowercase, strip_accents=strip_accents, clean_text=True, handle_chinese_chars=True)
        options.update(max_input_chars_per_word=100, continuing_subword_prefix="##",
                       unk_token=specials.unk or "[UNK]")
    return normalizer, options


def _check_merges_name_tokens(merges: list[tuple[str, str]], tokens: list[str], source: str) -> None:
    """A merge whose halves or result are not tokens is a corrupt file (tokenizers refuses
    it too: "merge token out of vocabulary"); say which merge."""
    known = set(tokens)
    lefts, rights = [m[0] for m in merges], [m[1] for m in merges]
    if known.issuperset(lefts) and known.issuperset(rights) and known.issuperset(map(str.__add__, lefts, rights)):
        return  # every merge names tokens (C passes); else find the first that does not
    for index, (left, right) in enumerate(merges):
        for part in (left, right, left + right):
            if part not in known:
                raise FormatError(f"{source}: merge #{index} {left!r} {right!r} names {part!r}, which is not a token")


def read_gguf(path, *, pre: str | None = None, data: bytes | None = None) -> VocabData:
    """Read a vocab-only (or full) GGUF file into VocabData.

    Example:
        >>> from labkit.formats.gguf import read_gguf
        >>> read_gguf("data/gguf/ggml-vocab-qwen2.gguf").pre
        'qwen2'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    return gguf_to_vocab(read_gguf_kv(path, data), str(path), pre=pre)
