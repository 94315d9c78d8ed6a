"""Read and write SentencePiece ``.model`` files (a ``ModelProto`` protobuf) without protobuf.

The file is protobuf wire format: a stream of (field number, wire type, value) records.
``ModelProto`` holds repeated ``pieces`` (field 1: piece, score, type), a ``trainer_spec``
(field 2: model type, byte fallback, special ids, ...) and a ``normalizer_spec`` (field 3:
name, precompiled charsmap, dummy prefix, whitespace flags). The field numbers below are
those of sentencepiece's ``sentencepiece_model.proto``. Fields this reader does not know are
kept as raw records and written back unchanged.
Introduced in notebook ``11_factory_formats_hub`` (file anatomy) and used by
``03_bpe_sentencepiece`` / ``05_unigram_trie_viterbi``.

Example:
    >>> from labkit.formats.spm_model import read_spm_model
    >>> read_spm_model("data/sentencepiece/botchan_en_bpe_1000.model").model
    'spm_bpe'
"""
from __future__ import annotations

import math
import struct
from typing import Any

from labkit.formats.files import file_bytes
from labkit.core import TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_UNUSED, TOKEN_USER_DEFINED
from labkit.core import AddedToken, FormatError, SpecialTokens, VocabData

# wire types
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5

# ModelProto.TrainerSpec.ModelType
SPM_UNIGRAM, SPM_BPE, SPM_WORD, SPM_CHAR = 1, 2, 3, 4
_MODEL_TYPE_NAMES = {SPM_UNIGRAM: "unigram", SPM_BPE: "bpe", SPM_WORD: "word", SPM_CHAR: "char"}
_FAMILY = {SPM_UNIGRAM: "unigram", SPM_BPE: "spm_bpe", SPM_WORD: "spm_word", SPM_CHAR: "spm_char"}

# field number -> (name, kind); kinds: string, bytes, bool, int32, uint64, float, enum,
# and "+string" for repeated strings
TRAINER_FIELDS: dict[int, tuple[str, str]] = {
    1: ("input", "+string"), 7: ("input_format", "string"), 2: ("model_prefix", "string"),
    3: ("model_type", "enum"), 4: ("vocab_size", "int32"), 5: ("accept_language", "+string"),
    6: ("self_test_sample_size", "int32"), 50: ("enable_differential_privacy", "bool"),
    51: ("differential_privacy_noise_level", "float"),
    52: ("differential_privacy_clipping_threshold", "uint64"),
    10: ("character_coverage", "float"), 11: ("input_sentence_size", "uint64"),
    19: ("shuffle_input_sentence", "bool"), 12: ("mining_sentence_size", "int32"),
    13: ("training_sentence_size", "int32"), 14: ("seed_sentencepiece_size", "int32"),
    15: ("shrinking_factor", "float"), 18: ("max_sentence_length", "int32"),
    16: ("num_threads", "int32"), 17: ("num_sub_iterations", "int32"),
    20: ("max_sentencepiece_length", "int32"), 21: ("split_by_unicode_script", "bool"),
    23: ("split_by_number", "bool"), 22: ("split_by_whitespace", "bool"),
    24: ("treat_whitespace_as_suffix", "bool"), 26: ("allow_whitespace_only_pieces", "bool"),
    25: ("split_digits", "bool"), 53: ("pretokenization_delimiter", "string"),
    30: ("control_symbols", "+string"), 31: ("user_defined_symbols", "+string"),
    36: ("required_chars", "string"), 35: ("byte_fallback", "bool"),
    32: ("vocabulary_output_piece_score", "bool"), 33: ("hard_vocab_limit", "bool"),
    34: ("use_all_vocab", "bool"), 40: ("unk_id", "int32"), 41: ("bos_id", "int32"),
    42: ("eos_id", "int32"), 43: ("pad_id", "int32"), 45: ("unk_piece", "string"),
    46: ("bos_piece", "string"), 47: ("eos_piece", "string"), 48: ("pad_piece", "string"),
    44: ("unk_surface", "string"), 49: ("train_extremely_large_corpus", "bool"),
    54: ("seed_sentencepieces_file", "string"), 55: ("auto_character_coverage", "bool"),
}
NORMALIZER_FIELDS: dict[int, tuple[str, str]] = {
    1: ("name", "string"), 2: ("precompiled_charsmap", "bytes"), 3: ("add_dummy_prefix", "bool"),
    4: ("remove_extra_whitespaces", "bool"), 5: ("escape_whitespaces", "bool"),
    6: ("normalization_rule_tsv", "string"),
}
# proto2 defaults of the fields that change how text is encoded
TRAINER_DEFAULTS = {
    "model_type": SPM_UNIGRAM, "vocab_size": 8000, "treat_whitespace_as_suffix": False,
    "allow_whitespace_only_pieces": False, "split_digits": False, "byte_fallback": False,
    "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1, "unk_piece": "<unk>",
    "bos_piece": "<s>", "eos_piece": "</s>", "pad_piece": "<pad>", "unk_surface": " \u2047 ",
}
NORMALIZER_DEFAULTS = {
    "name": "", "precompiled_charsmap": b"", "add_dummy_prefix": True,
    "remove_extra_whitespaces": True, "escape_whitespaces": True,
}
_KNOWN_PIECE_TYPES = (TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED, TOKEN_BYTE)
_MAX_VARINT_BYTES = 10


# ----------------------------------------------------------------------------- wire reading


class _Wire:
    """A bounds-checked protobuf wire reader over ``data[start:end]``; errors name the place."""

    def __init__(self, data: bytes, source: str, start: int = 0, end: int | None = None, where: str = "ModelProto"):
        self.data = data
        self.pos = start
        self.end = len(data) if end is None else end
        self.source = source
        self.where = where

    def fail(self, what: str) -> FormatError:
        return FormatError(f"{self.source}: not a valid SentencePiece model: {what} at byte {self.pos} (in {self.where})")

    def varint(self) -> int:
        data, pos, end = self.data, self.pos, self.end
        result = shift = 0
        for count in range(_MAX_VARINT_BYTES):
            if pos >= end:
                raise self.fail("truncated varint")
            byte = data[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.pos = pos
                return result
            shift += 7
        raise self.fail("varint longer than 10 bytes")

    def tag(self) -> tuple[int, int]:
        key = self.varint()
        field, wire = key >> 3, key & 7
        if field == 0:
            raise self.fail("field number 0")
        if wire not in (_VARINT, _FIXED64, _LEN, _FIXED32):
            raise self.fail(f"unsupported wire type {wire} for field {field}")
        return field, wire

    def length_delimited(self) -> tuple[int, int]:
        n = self.varint()
        start = self.pos
        if n > self.end - start:
            raise self.fail(f"length {n} runs past the end ({self.end - start} bytes left)")
        self.pos = start + n
        return start, start + n

    def fixed(self, size: int) -> bytes:
        if self.pos + size > self.end:
            raise self.fail(f"truncated {size * 8}-bit value")
        raw = self.data[self.pos : self.pos + size]
        self.pos += size
        return raw

    def raw_value(self, wire: int) -> Any:
        """The undecoded value of one record (for unknown fields)."""
        if wire == _VARINT:
            return self.varint()
        if wire == _FIXED64:
            return self.fixed(8)
        if wire == _FIXED32:
            return self.fixed(4)
        start, end = self.length_delimited()
        return bytes(self.data[start:end])

    def sub(self, where: str) -> "_Wire":
        start, end = self.length_delimited()
        return _Wire(self.data, self.source, start, end, where)


def _int32(value: int) -> int:
    """A varint read as protobuf int32 (negatives are 10-byte two's complement)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _decode_text(wire: _Wire, start: int, end: int, name: str) -> str:
    try:
        return bytes(wire.data[start:end]).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise wire.fail(f"{name} is not valid UTF-8 ({exc.reason})") from None


def _read_message(wire: _Wire, fields: dict[int, tuple[str, str]]) -> dict[str, Any]:
    """Decode a flat message by a field table; unknown records go to ``_unknown``."""
    out: dict[str, Any] = {}
    unknown: list[tuple[int, int, Any]] = []
    expected_wire = {"string": _LEN, "bytes": _LEN, "+string": _LEN, "float": _FIXED32,
                     "bool": _VARINT, "int32": _VARINT, "uint64": _VARINT, "enum": _VARINT}
    while wire.pos < wire.end:
        field, wtype = wire.tag()
        spec = fields.get(field)
        if spec is None:
            unknown.append((field, wtype, wire.raw_value(wtype)))
            continue
        name, kind = spec
        if wtype != expected_wire[kind]:
            raise wire.fail(f"field {name} (#{field}) has wire type {wtype}, expected {expected_wire[kind]}")
        if kind in ("string", "+string"):
            start, end = wire.length_delimited()
            text = _decode_text(wire, start, end, name)
            if kind == "+string":
                out.setdefault(name, []).append(text)
            else:
                out[name] = text
        elif kind == "bytes":
            start, end = wire.length_delimited()
            out[name] = bytes(wire.data[start:end])
        elif kind == "float":
            (out[name],) = struct.unpack("<f", wire.fixed(4))
        elif kind == "bool":
            out[name] = wire.varint() != 0
        elif kind in ("int32", "enum"):
            out[name] = _int32(wire.varint())
        else:  # uint64
            out[name] = wire.varint() & 0xFFFFFFFFFFFFFFFF
    if unknown:
        out["_unknown"] = unknown
    return out


def _read_piece(wire: _Wire, index: int) -> tuple[str, float, int]:
    piece, score, ptype = None, 0.0, TOKEN_NORMAL
    while wire.pos < wire.end:
        field, wtype = wire.tag()
        if field == 1 and wtype == _LEN:
            start, end = wire.length_delimited()
            piece = _decode_text(wire, start, end, f"piece #{index}")
        elif field == 2 and wtype == _FIXED32:
            (score,) = struct.unpack("<f", wire.fixed(4))
        elif field == 3 and wtype == _VARINT:
            ptype = _int32(wire.varint())
        elif field in (1, 2, 3):
            raise wire.fail(f"piece #{index} field {field} has the wrong wire type {wtype}")
        else:
            wire.raw_value(wtype)  # an extension we do not need
    if piece is None:
        raise wire.fail(f"piece #{index} has no text")
    if not math.isfinite(score):
        # an infinite or NaN score makes every path through the lattice the same (or none):
        # refused here, before any engine sums it (the Unigram engine bounds finite scores)
        raise wire.fail(f"piece #{index} {piece!r} has score {score}, not a finite number")
    if ptype not in _KNOWN_PIECE_TYPES:
        raise wire.fail(f"piece #{index} {piece!r} has unknown type {ptype}")
    return piece, score, ptype


def parse_model_proto(data: bytes, source: str = "<bytes>") -> dict[str, Any]:
    """Decode a ModelProto into plain dicts: pieces [(piece, score, type)], trainer_spec,
    normalizer_spec, denormalizer_spec (or None) and unknown top-level records.

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.spm_model import parse_model_proto
        >>> p = data_path("sentencepiece/botchan_en_bpe_1000.model")
        >>> parse_model_proto(p.read_bytes())["trainer_spec"]["model_type"]
        2

    Introduced in notebook ``11_factory_formats_hub``.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise FormatError(f"{source}: a SentencePiece model must be bytes, got {type(data).__name__}")
    data = bytes(data)
    wire = _Wire(data, source)
    pieces: list[tuple[str, float, int]] = []
    trainer: dict[str, Any] = {}
    normalizer: dict[str, Any] = {}
    denormalizer: dict[str, Any] | None = None
    unknown: list[tuple[int, int, Any]] = []
    while wire.pos < wire.end:
        field, wtype = wire.tag()
        if field in (1, 2, 3, 5) and wtype != _LEN:
            raise wire.fail(f"top-level field {field} has wire type {wtype}, expected a message")
        if field == 1:
            pieces.append(_read_piece(wire.sub(f"piece #{len(pieces)}"), len(pieces)))
        elif field == 2:
            trainer.update(_read_message(wire.sub("trainer_spec"), TRAINER_FIELDS))
        elif field == 3:
            normalizer.update(_read_message(wire.sub("normalizer_spec"), NORMALIZER_FIELDS))
        elif field == 5:
            denormalizer = _read_message(wire.sub("denormalizer_spec"), NORMALIZER_FIELDS)
        else:
            unknown.append((field, wtype, wire.raw_value(wtype)))
    return {"pieces": pieces, "trainer_spec": trainer, "normalizer_spec": normalizer,
            "denormalizer_spec": denormalizer, "unknown": unknown}


# ----------------------------------------------------------------------------- to VocabData


# sentencepiece keeps two piece -> id maps: one for the pieces text can be cut into (NORMAL,
# USER_DEFINED, UNUSED), one for the reserved ones (CONTROL, UNKNOWN, BYTE)
_MATCHABLE_TYPES = (TOKEN_NORMAL, TOKEN_USER_DEFINED, TOKEN_UNUSED)


def _duplicate_rule(model_type: int) -> str:
    if model_type == SPM_BPE:
        return "its BPE model keeps every spelling once"
    return "a spelling may be one ordinary and one control/unknown/byte piece, not twice either"


def duplicate_clash(tokens, types, model_type: int) -> tuple[int, int] | None:
    """The first (index, earlier index) of a repeated spelling sentencepiece 0.2.3 refuses,
    None if it loads the model: its unigram, char and word models keep the two maps apart, so
    one spelling may be both an ordinary piece and a reserved one (a NORMAL ``<s>`` beside the
    CONTROL one); its BPE model refuses any repeat ("... is already defined").

    Example:
        >>> duplicate_clash(["<unk>", "<s>", "<s>"], [2, 3, 1], SPM_UNIGRAM), duplicate_clash(["<unk>", "<s>", "<s>"], [2, 3, 1], SPM_BPE)
        (None, (2, 1))
    """
    seen: dict[tuple[str, bool], int] = {}
    for index, (piece, kind) in enumerate(zip(tokens, types)):
        group = True if model_type == SPM_BPE else kind in _MATCHABLE_TYPES
        if (piece, group) in seen:
            return index, seen[(piece, group)]
        seen[(piece, group)] = index
    return None


def _check_byte_pieces(tokens, types, byte_fallback: bool, source: str) -> None:
    """Refuse what sentencepiece refuses at load (model_interface.cc InitializePieces): a BYTE
    piece without byte_fallback, a BYTE piece not spelled ``<0xNN>`` (upper-case hex), and
    byte_fallback without all 256 byte pieces."""
    found = set()
    for index, (piece, kind) in enumerate(zip(tokens, types)):
        if kind != TOKEN_BYTE:
            continue
        if not byte_fallback:
            raise FormatError(f"{source}: piece #{index} {piece!r} is a BYTE piece but trainer_spec.byte_fallback is false; "
                              "sentencepiece refuses such a model")
        value = int(piece[3:5], 16) if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">") \
            and all(c in "0123456789ABCDEF" for c in piece[3:5]) else None
        if value is None:
            raise FormatError(f"{source}: piece #{index} {piece!r} is a BYTE piece not spelled <0xNN>; sentencepiece refuses it")
        found.add(value)
    if byte_fallback and len(found) != 256:
        raise FormatError(f"{source}: trainer_spec.byte_fallback is true but the model has {len(found)} of the 256 byte "
                          "pieces; sentencepiece refuses such a model")


def model_proto_to_vocab(proto: dict[str, Any], source: str) -> VocabData:
    """Turn a parsed ModelProto into VocabData (model "unigram" or "spm_bpe").

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.spm_model import model_proto_to_vocab, parse_model_proto
        >>> blob = data_path("sentencepiece/botchan_en_unigram_1000.model").read_bytes()
        >>> model_proto_to_vocab(parse_model_proto(blob), "m.model").scores[:2]
        [0.0, 0.0]

    Introduced in notebook ``11_factory_formats_hub``.
    """
    pieces = proto["pieces"]
    if not pieces:
        raise FormatError(f"{source}: SentencePiece model has no pieces")
    trainer = {**TRAINER_DEFAULTS, **proto["trainer_spec"]}
    norm = {**NORMALIZER_DEFAULTS, **proto["normalizer_spec"]}
    model_type = trainer["model_type"]
    family = _FAMILY.get(model_type)
    if family is None:
        name = _MODEL_TYPE_NAMES.get(model_type, f"type {model_type}")
        raise FormatError(f"{source}: SentencePiece model type {name!r} is not supported (labkit reads unigram, bpe, word and char)")
    tokens = [p for p, _, _ in pieces]
    scores = [s for _, s, _ in pieces]
    types = [t for _, _, t in pieces]
    if len(set(tokens)) != len(tokens):
        clash = duplicate_clash(tokens, types, model_type)
        if clash is not None:
            index, first = clash
            raise FormatError(f"{source}: piece #{index} {tokens[index]!r} repeats piece #{first}; sentencepiece refuses "
                              f"such a duplicate ({_duplicate_rule(model_type)})")
    n = len(tokens)
    _check_byte_pieces(tokens, types, bool(trainer["byte_fallback"]), source)
    unknown_ids = [i for i, t in enumerate(types) if t == TOKEN_UNKNOWN]
    if len(unknown_ids) != 1:
        raise FormatError(f"{source}: a SentencePiece model needs exactly one UNKNOWN piece, found {len(unknown_ids)}")

    # sentencepiece ignores trainer_spec's *_id fields at load: its special ids are the pieces
    # spelled like trainer_spec's *_piece fields (empty: the default spelling), looked up
    # reserved pieces first, kept only when of the right type (bos_id(), eos_id(), pad_id():
    # CONTROL; unk_id(): UNKNOWN); encoding writes the UNKNOWN piece whatever its spelling
    reserved_index: dict[str, int] = {}
    ordinary_index: dict[str, int] = {}
    for index, (piece, kind) in enumerate(zip(tokens, types)):
        (ordinary_index if kind in _MATCHABLE_TYPES else reserved_index).setdefault(piece, index)

    def special(name: str) -> tuple[str | None, int | None]:
        spelling = trainer.get(f"{name}_piece") or TRAINER_DEFAULTS[f"{name}_piece"]
        index = reserved_index.get(spelling, ordinary_index.get(spelling))
        if index is None or types[index] != TOKEN_CONTROL:
            return None, None
        return tokens[index], index

    unk, unk_id = tokens[unknown_ids[0]], unknown_ids[0]
    (bos, bos_id), (eos, eos_id), (pad, pad_id) = (special(k) for k in ("bos", "eos", "pad"))
    specials = SpecialTokens(
        bos=bos, eos=eos, unk=unk, pad=pad, bos_id=bos_id, eos_id=eos_id, unk_id=unk_id, pad_id=pad_id,
        eos_ids=(eos_id,) if eos_id is not None else (),
        add_bos=False, add_eos=False,  # sentencepiece itself adds neither unless asked
    )
    # sentencepiece never matches a CONTROL piece in text (its spelling is ordinary text; it
    # stays special through its type), and keeps USER_DEFINED pieces inside the model: they
    # are listed as non-special added tokens, which engines serving a .model handle after
    # normalisation, as sentencepiece does (model_interface.cc, normalizer.cc)
    added = [AddedToken(piece, index, special=False)
             for index, (piece, ptype) in enumerate(zip(tokens, types)) if ptype == TOKEN_USER_DEFINED]
    charsmap = norm["precompiled_charsmap"] or None
    normalizer = {
        "name": norm["name"],
        "charsmap": charsmap,
        "add_dummy_prefix": norm["add_dummy_prefix"],
        "remove_extra_whitespaces": norm["remove_extra_whitespaces"],
        "escape_whitespaces": norm["escape_whitespaces"],
        "treat_whitespace_as_suffix": trainer["treat_whitespace_as_suffix"],
    }
    options = {
        "byte_fallback": trainer["byte_fallback"],
        "split_digits": trainer["split_digits"],
        "allow_whitespace_only_pieces": trainer["allow_whitespace_only_pieces"],
        "unk_token": unk,
        "unk_surface": trainer["unk_surface"],
        # sentencepiece's PieceToId looks in its reserved pieces (control, unknown, byte) first
        "reserved_spellings_first": True,
    }
    metadata = {
        "trainer_spec": proto["trainer_spec"],
        "normalizer_spec": proto["normalizer_spec"],
        "denormalizer_spec": proto["denormalizer_spec"],
        "model_type_name": _MODEL_TYPE_NAMES[model_type],
    }
    if proto["unknown"]:
        metadata["unknown_fields"] = proto["unknown"]
    return VocabData(
        source=source, format="spm_model", model=family, tokens=tokens, token_types=types,
        scores=scores, normalizer=normalizer, options=options, specials=specials,
        added_tokens=added, metadata=metadata,
    )


def read_spm_model(path, *, data: bytes | None = None) -> VocabData:
    """Read a SentencePiece ``.model`` file into VocabData.

    Example:
        >>> from labkit.formats.spm_model import read_spm_model
        >>> from labkit.paths import data_path
        >>> read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model")).scores[3]
        -2.9318392276763916

    Introduced in notebook ``11_factory_formats_hub``.
    """
    source = str(path)
    data = file_bytes(path, data, "spm_model")
    return model_proto_to_vocab(parse_model_proto(data, source), source)


def looks_like_model_proto(data: bytes) -> bool:
    """True when ``data`` starts like a ModelProto: a piece record holding a UTF-8 piece
    (then optional score and type), or a trainer/normalizer spec message.

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.spm_model import looks_like_model_proto
        >>> looks_like_model_proto(data_path("sentencepiece/botchan_en_bpe_1000.model").read_bytes()[:4096])
        True

    Introduced in notebook ``11_factory_formats_hub``.
    """
    wire = _Wire(bytes(data[:4096]), "<sniff>")
    try:
        field, wtype = wire.tag()
        if field not in (1, 2, 3) or wtype != _LEN:
            return False
        n = wire.varint()
        if n == 0:
            return field != 1
        inner = _Wire(wire.data, "<sniff>", wire.pos, min(wire.pos + n, wire.end))
        if field != 1:
            # a spec message: its first record must be a known field with the right wire type
            table = TRAINER_FIELDS if field == 2 else NORMALIZER_FIELDS
            sub_field, sub_wire = inner.tag()
            return sub_field in table
        sub_field, sub_wire = inner.tag()
        if sub_field != 1 or sub_wire != _LEN:
            return False
        length = inner.varint()
        if length > n or inner.pos + length > inner.end:
            return False
        bytes(inner.data[inner.pos : inner.pos + length]).decode("utf-8")
        inner.pos += length
        while inner.pos < inner.end:
            sub_field, sub_wire = inner.tag()
            if (sub_field, sub_wire) == (2, _FIXED32):
                inner.fixed(4)
            elif (sub_field, sub_wire) == (3, _VARINT):
                inner.varint()
            else:
                return False
        return True
    except (FormatError, UnicodeDecodeError):
        return False


# ----------------------------------------------------------------------------- writing


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # protobuf writes negative int32/enum as 10-byte two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _len_record(field: int, payload: bytes) -> bytes:
    return _key(field, _LEN) + _varint(len(payload)) + payload


def _write_message(values: dict[str, Any], fields: dict[int, tuple[str, str]]) -> bytes:
    out = bytearray()
    for number in sorted(fields):
        name, kind = fields[number]
        if name not in values or values[name] is None:
            continue
        value = values[name]
        if kind == "+string":
            for item in value:
                out += _len_record(number, item.encode("utf-8"))
        elif kind == "string":
            out += _len_record(number, value.encode("utf-8"))
        elif kind == "bytes":
            out += _len_record(number, bytes(value))
        elif kind == "float":
            out += _key(number, _FIXED32) + struct.pack("<f", value)
        elif kind == "bool":
            out += _key(number, _VARINT) + _varint(1 if value else 0)
        else:
            out += _key(number, _VARINT) + _varint(int(value))
    for number, wire, raw in values.get("_unknown", ()):
        out += _write_raw(number, wire, raw)
    return bytes(out)


def _write_raw(number: int, wire: int, raw: Any) -> bytes:
    if wire == _VARINT:
        return _key(number, wire) + _varint(raw)
    if wire == _LEN:
        return _len_record(number, raw)
    return _key(number, wire) + raw


def write_model_proto(vocab: VocabData) -> bytes:
    """Serialise VocabData as a SentencePiece ModelProto, so the reference
    ``sentencepiece.SentencePieceProcessor(model_proto=...)`` can serve a GGUF vocabulary:
    the pieces, then the trainer spec, the normaliser spec and (for a .model) its denormaliser.

    sentencepiece accepts exactly one UNKNOWN piece: the one at ``specials.unk_id`` (else
    the first of that type) stays UNKNOWN, any other becomes CONTROL.
    Example:
        >>> import sentencepiece
        >>> from labkit.paths import data_path
        >>> from labkit.formats.gguf import read_gguf
        >>> vocab = read_gguf(data_path("gguf/ggml-vocab-llama-spm.gguf"))
        >>> sp = sentencepiece.SentencePieceProcessor(model_proto=write_model_proto(vocab))
        >>> sp.encode("Hello world"), sp.get_piece_size() == len(vocab.tokens)
        ([15043, 3186], True)

    Introduced in notebook ``11_factory_formats_hub``.
    """
    model_type = {"unigram": SPM_UNIGRAM, "spm_bpe": SPM_BPE, "spm_word": SPM_WORD, "spm_char": SPM_CHAR}.get(vocab.model)
    if model_type is None:
        raise FormatError(f"{vocab.name}: a SentencePiece model holds unigram, spm_bpe, spm_word or spm_char, not {vocab.model!r}")
    if not vocab.tokens:
        raise FormatError(f"{vocab.name}: no tokens to write")
    types, keep = _types_with_one_unknown(vocab)
    out = bytearray(_pieces_records(vocab, types, model_type))
    out += _len_record(2, _write_message(_trainer_spec(vocab, model_type, keep), TRAINER_FIELDS))
    out += _len_record(3, _write_message(_normalizer_spec(vocab), NORMALIZER_FIELDS))
    denorm = vocab.metadata.get("denormalizer_spec") if vocab.format == "spm_model" else None
    if denorm:
        out += _len_record(5, _write_message(denorm, NORMALIZER_FIELDS))
    return bytes(out)


def _types_with_one_unknown(vocab: VocabData) -> tuple[list[int], int]:
    """The piece types with exactly one UNKNOWN (the others CONTROL), and its index."""
    n = len(vocab.tokens)
    types = list(vocab.token_types)
    if len(types) != n:
        raise FormatError(f"{vocab.name}: tokens, types and scores differ in length")
    sp = vocab.specials
    unknown_ids = [i for i, t in enumerate(types) if t == TOKEN_UNKNOWN]
    if sp.unk_id is not None and 0 <= sp.unk_id < n:
        keep = sp.unk_id
    elif unknown_ids:
        keep = unknown_ids[0]
    else:
        raise FormatError(f"{vocab.name}: no unknown token; sentencepiece needs exactly one")
    for i in unknown_ids:
        if i != keep:
            types[i] = TOKEN_CONTROL
    types[keep] = TOKEN_UNKNOWN
    return types, keep


def _pieces_records(vocab: VocabData, types: list[int], model_type: int) -> bytes:
    """One ``pieces`` record (text, score, type) per token; empty pieces, and repeats
    sentencepiece would refuse (:func:`duplicate_clash`), refused."""
    n = len(vocab.tokens)
    scores = vocab.scores if vocab.scores is not None else [0.0] * n
    if len(scores) != n:
        raise FormatError(f"{vocab.name}: tokens, types and scores differ in length")
    clash = duplicate_clash(vocab.tokens, types, model_type) if len(set(vocab.tokens)) != n else None
    if clash is not None:
        index = clash[0]
        raise FormatError(f"{vocab.name}: token #{index} {vocab.tokens[index]!r} appears twice; sentencepiece rejects "
                          f"such a duplicate ({_duplicate_rule(model_type)})")
    out = bytearray()
    for index, (piece, score, ptype) in enumerate(zip(vocab.tokens, scores, types)):
        if not piece:
            raise FormatError(f"{vocab.name}: token #{index} is empty; sentencepiece rejects empty pieces")
        body = _len_record(1, piece.encode("utf-8")) + _key(2, _FIXED32) + struct.pack("<f", float(score))
        if ptype != TOKEN_NORMAL:
            body += _key(3, _VARINT) + _varint(ptype)
        out += _len_record(1, body)
    return bytes(out)


def _trainer_spec(vocab: VocabData, model_type: int, keep: int) -> dict[str, Any]:
    """The trainer spec: a .model's own, updated with the model type, flags and special ids."""
    n = len(vocab.tokens)
    sp = vocab.specials
    options = vocab.options
    trainer = dict(vocab.metadata.get("trainer_spec") or {}) if vocab.format == "spm_model" else {}

    def special_id(index: int | None) -> int:
        return index if index is not None else -1

    trainer.update(
        model_type=model_type,
        vocab_size=n,
        byte_fallback=bool(options.get("byte_fallback", False)),
        treat_whitespace_as_suffix=bool(vocab.normalizer.get("treat_whitespace_as_suffix", False)),
        unk_id=keep,
        bos_id=special_id(sp.bos_id),
        eos_id=special_id(sp.eos_id),
        pad_id=special_id(sp.pad_id),
        unk_piece=vocab.tokens[keep],
    )
    for name in ("bos", "eos", "pad"):
        index = getattr(sp, f"{name}_id")
        if index is not None and 0 <= index < n:
            trainer[f"{name}_piece"] = vocab.tokens[index]
    for name in ("split_digits", "allow_whitespace_only_pieces"):
        if name in options:
            trainer[name] = bool(options[name])
    return trainer


def _normalizer_spec(vocab: VocabData) -> dict[str, Any]:
    """The normaliser spec: charsmap (or identity) and the whitespace flags."""
    norm_in = vocab.normalizer
    norm = dict(vocab.metadata.get("normalizer_spec") or {}) if vocab.format == "spm_model" else {}
    charsmap = norm_in.get("charsmap")
    norm.update(
        name=norm_in.get("name") or norm.get("name") or ("user_defined" if charsmap else "identity"),
        precompiled_charsmap=bytes(charsmap) if charsmap else b"",
        add_dummy_prefix=bool(norm_in.get("add_dummy_prefix", True)),
        remove_extra_whitespaces=bool(norm_in.get("remove_extra_whitespaces", True)),
        escape_whitespaces=bool(norm_in.get("escape_whitespaces", True)),
    )
    return norm
