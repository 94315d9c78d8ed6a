"""Read a Hugging Face ``tokenizer.json`` (plus ``tokenizer_config.json`` beside it) into VocabData.

``tokenizer.json`` is the serialised ``tokenizers.Tokenizer``: a ``model`` (BPE, WordPiece or
Unigram, with its vocabulary), a ``normalizer``, a ``pre_tokenizer``, a ``post_processor``
(which adds [CLS]/[SEP] or BOS), a ``decoder`` and the ``added_tokens``.
``tokenizer_config.json`` and the chat template files beside it are read by
``formats/hf_config.py``, for every format alike.
Introduced in notebook ``11_factory_formats_hub`` (tokenizer.json anatomy).

Example:
    >>> from labkit.formats.hf_json import read_hf_json
    >>> read_hf_json("data/hf/all-MiniLM-L6-v2/tokenizer.json").model
    'wordpiece'
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from labkit.algorithms.bytes_unicode import try_gpt2_to_bytes
from labkit.algorithms.charsmap import charsmap_from_base64
from labkit.formats.files import UTF8_BOM, read_bytes, utf8_text
from labkit.formats.hf_components import check_components, labkit_refusal, pipeline_refusal
from labkit.core import TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_UNUSED, TOKEN_USER_DEFINED
from labkit.core import AddedToken, FormatError, LabkitError, SpecialTokens, VocabData

SPECIAL_NAMES = ("bos", "eos", "unk", "pad", "sep", "cls", "mask")
# ids may skip numbers, but a corrupt id must not make us allocate a huge table
MAX_ID_HOLES = 1 << 16
_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>\Z")

_GPT2_REGEX = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# split regexes of tokenizer.json files -> llama.cpp's pre-tokenizer names
KNOWN_SPLIT_REGEXES = {
    _GPT2_REGEX: "gpt-2",
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""": "llama3",
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""": "qwen2",
}


# ----------------------------------------------------------------------------- JSON helpers


def parse_json(data: bytes, source: str) -> Any:
    """Parse JSON bytes (an optional UTF-8 BOM first); any defect is a FormatError.

    Example:
        >>> from labkit.formats.hf_json import parse_json
        >>> parse_json(b'\\xef\\xbb\\xbf{"a": 1}', "x.json")
        {'a': 1}

    Introduced in notebook ``11_factory_formats_hub``.
    """
    text = utf8_text(data, source)
    if not text.strip():
        raise FormatError(f"{source}: file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"{source}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # e.g. a 5000-digit number or nesting too deep
        raise FormatError(f"{source}: invalid JSON ({type(exc).__name__}: {str(exc)[:80]})") from None


def load_json_file(path) -> Any:
    """Read and parse one JSON file (FormatError on any problem).

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.hf_json import load_json_file
        >>> load_json_file(data_path("hf/all-MiniLM-L6-v2") / "tokenizer_config.json")["tokenizer_class"]
        'BertTokenizer'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    return parse_json(read_bytes(path), str(path))


def expect(value: Any, kind, source: str, where: str, *, optional: bool = False) -> Any:
    """Check a JSON value's type; ``kind`` is a type or tuple. bool is never an int here.

    Example:
        >>> expect({"type": "BPE"}, dict, "tokenizer.json", "model")
        {'type': 'BPE'}
        >>> expect(True, int, "tokenizer.json", "model.vocab['a']")
        Traceback (most recent call last):
        labkit.core.FormatError: tokenizer.json: model.vocab['a'] should be int, got bool

    Introduced in notebook ``11_factory_formats_hub``.
    """
    if value is None and optional:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        names = " or ".join(k.__name__ for k in kinds)
        got = "null" if value is None else type(value).__name__
        raise FormatError(f"{source}: {where} should be {names}, got {got}")
    return value


def _flag(obj: dict, key: str, source: str, where: str, default: Any) -> Any:
    value = obj.get(key, default)
    if value is None or value is default:
        return value
    return expect(value, bool, source, f"{where}.{key}")


# ----------------------------------------------------------------------------- vocab tables


def vocab_from_mapping(mapping: Any, source: str, where: str) -> dict[int, str]:
    """{token: id} (tokenizer.json / vocab.json) -> {id: token}, checked.

    Example:
        >>> from labkit.formats.hf_json import vocab_from_mapping
        >>> vocab_from_mapping({"a": 0, "b": 1}, "vocab.json", "vocab")
        {0: 'a', 1: 'b'}

    Introduced in notebook ``11_factory_formats_hub``.
    """
    expect(mapping, dict, source, where)
    by_id: dict[int, str] = {}
    for token, index in mapping.items():
        expect(index, int, source, f"{where}[{token[:40]!r}]")
        if index < 0:
            raise FormatError(f"{source}: {where}[{token[:40]!r}] has negative id {index}")
        if index in by_id:
            raise FormatError(f"{source}: {where}: id {index} is given to both {by_id[index][:40]!r} and {token[:40]!r}")
        by_id[index] = token
    return by_id


def tokens_from_ids(by_id: dict[int, str], source: str) -> tuple[list[str], list[int]]:
    """Dense id -> token list; holes become ``<|unused_ID|>`` with type UNUSED.

    Example:
        >>> from labkit.formats.hf_json import tokens_from_ids
        >>> tokens_from_ids({0: "a", 2: "c"}, "x")
        (['a', '<|unused_1|>', 'c'], [1, 5, 1])

    Introduced in notebook ``11_factory_formats_hub``.
    """
    if not by_id:
        raise FormatError(f"{source}: the vocabulary is empty")
    size = max(by_id) + 1
    if size - len(by_id) > MAX_ID_HOLES:
        raise FormatError(f"{source}: ids go up to {size - 1} but only {len(by_id)} tokens are given")
    tokens = [""] * size
    types = [TOKEN_NORMAL] * size
    for index in range(size):
        token = by_id.get(index)
        if token is None:
            tokens[index] = f"<|unused_{index}|>"
            types[index] = TOKEN_UNUSED
        else:
            tokens[index] = token
    return tokens, types


def parse_added_tokens(items: Any, source: str, where: str = "added_tokens") -> list[AddedToken]:
    """The ``added_tokens`` list of tokenizer.json (dicts with id, content and flags).

    Example:
        >>> from labkit.formats.hf_json import parse_added_tokens
        >>> parse_added_tokens([{"id": 0, "content": "[PAD]", "special": True}], "x")[0].special
        True

    Introduced in notebook ``11_factory_formats_hub``.
    """
    expect(items, list, source, where)
    out = []
    for n, item in enumerate(items):
        place = f"{where}[{n}]"
        expect(item, dict, source, place)
        index = expect(item.get("id"), int, source, f"{place}.id")
        content = expect(item.get("content"), str, source, f"{place}.content")
        if index < 0:
            raise FormatError(f"{source}: {place}.id is negative ({index})")
        if not content:
            raise FormatError(f"{source}: {place}.content is empty")
        flags = {name: _flag(item, name, source, place, default)
                 for name, default in (("special", False), ("normalized", None), ("lstrip", False),
                                       ("rstrip", False), ("single_word", False))}
        normalized = flags["normalized"]
        if normalized is None:
            normalized = not flags["special"]  # HF's default: non-special tokens match after normalisation
        out.append(AddedToken(content, index, special=bool(flags["special"]), normalized=bool(normalized),
                              lstrip=bool(flags["lstrip"]), rstrip=bool(flags["rstrip"]),
                              single_word=bool(flags["single_word"])))
    return out


def parse_merges(items: Any, source: str, where: str = "model.merges") -> list[tuple[str, str]]:
    """BPE merges: "a b" strings (older files) or [a, b] pairs (newer files).

    Example:
        >>> from labkit.formats.hf_json import parse_merges
        >>> parse_merges(["a b", ["ab", "c"]], "x")
        [('a', 'b'), ('ab', 'c')]

    Introduced in notebook ``11_factory_formats_hub``.
    """
    expect(items, list, source, where)
    merges = []
    for n, item in enumerate(items):
        if isinstance(item, str):
            parts = item.split(" ")
            if len(parts) != 2 or not parts[0] or not parts[1]:
                raise FormatError(f"{source}: {where}[{n}] {item[:60]!r} is not 'left right'")
            merges.append((parts[0], parts[1]))
        elif isinstance(item, list) and len(item) == 2 and all(isinstance(p, str) and p for p in item):
            merges.append((item[0], item[1]))
        else:
            raise FormatError(f"{source}: {where}[{n}] should be 'left right' or [left, right], got {str(item)[:60]}")
    return merges


def check_merges(merges: list[tuple[str, str]], vocab: dict[str, int], source: str, prefix: str = "") -> None:
    """Every merge's parts and result must be tokens (what tokenizers itself requires);
    with a continuing-subword ``prefix`` the result drops as many bytes from the right part's
    start as the prefix has, whether they are the prefix or not (as tokenizers does).

    Example:
        >>> check_merges([("a", "##b")], {"a": 0, "##b": 1, "ab": 2}, "tokenizer.json", prefix="##")
        >>> check_merges([("a", "\u0301")], {"a": 0, "\u0301": 1}, "tokenizer.json", prefix="##")  # makes 'a'
        >>> check_merges([("a", "b")], {"a": 0, "b": 1}, "tokenizer.json")
        Traceback (most recent call last):
        labkit.core.FormatError: tokenizer.json: merge #0 ('a', 'b') uses 'ab', which is not in the vocabulary

    Introduced in notebook ``11_factory_formats_hub``.
    """
    cut = len(prefix.encode("utf-8")) if prefix else 0
    for n, (left, right) in enumerate(merges):
        made = left + right.encode("utf-8")[cut:].decode("utf-8", "replace")
        for part in (left, right, made):
            if part not in vocab:
                raise FormatError(f"{source}: merge #{n} ({left!r}, {right!r}) uses {part[:40]!r}, which is not in the vocabulary")


# ----------------------------------------------------------------------------- pipeline parts


_SEQUENCE_KEY = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "decoder": "decoders"}


def _components(node: Any, source: str, where: str) -> list[dict]:
    """A normalizer/pre-tokenizer/decoder as a flat list (Sequence unrolled, depth-first)."""
    key = _SEQUENCE_KEY[where]
    out: list[dict] = []
    stack = [(node, where)]  # a stack, not recursion: nesting depth is the file's choice
    while stack:
        item, place = stack.pop()
        if item is None and place == where:
            continue
        expect(item, dict, source, place)
        kind = item.get("type")
        if kind is not None:
            expect(kind, str, source, f"{place}.type")
        if kind == "Sequence":
            parts = expect(item.get(key), list, source, f"{place}.{key}")
            stack.extend((part, f"{place}.{key}[{n}]") for n, part in reversed(list(enumerate(parts))))
        else:
            out.append(item)
    return out


def _split_pre_name(pretokenizers: list[dict], nfc: bool) -> str | None:
    """llama.cpp's name for the split of a byte-level BPE pre-tokenizer: the Split regexes
    (and ByteLevel's own GPT-2 regex when it is on) looked up in labkit's pre-tokenizer table."""
    regexes = []
    for node in pretokenizers:
        kind = node.get("type")
        if kind == "Split":
            pattern = node.get("pattern")
            regex = pattern.get("Regex", pattern.get("String")) if isinstance(pattern, dict) else None
            if not isinstance(regex, str):
                return None
            regexes.append(regex)
        elif kind == "ByteLevel" and node.get("use_regex", True) is not False:
            regexes.append(_GPT2_REGEX)
        elif kind not in ("ByteLevel", None):
            return None  # Digits, Punctuation, ...: not a split labkit can name
    if not regexes:
        return None
    candidates = []
    try:
        from labkit.algorithms.pretokenize import PRE_TOKENIZERS

        for spec in PRE_TOKENIZERS.values():
            if spec.regexes == tuple(regexes) and spec.tiktoken_pattern is None and spec.name != "default":
                candidates.append(spec)
    except ImportError:  # the table is optional here: fall back to the three common splits
        pass
    for spec in candidates:
        if spec.nfc == nfc:
            return spec.name
    if candidates:
        return candidates[0].name
    return KNOWN_SPLIT_REGEXES.get(regexes[0]) if len(regexes) == 1 else None


def _post_processor_framing(post: Any, source: str, depth: int = 0) -> dict[str, Any]:
    """What the post-processor adds around one sequence: leading and trailing specials."""
    if post is None:
        return {}
    expect(post, dict, source, "post_processor")
    kind = post.get("type")
    if kind in ("BertProcessing", "RobertaProcessing"):
        out = {"kind": "cls_sep"}
        for name in ("cls", "sep"):
            pair = post.get(name)
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], int) and not isinstance(pair[1], bool):
                out[name] = (pair[0], pair[1])
        return out
    if kind == "TemplateProcessing":
        single = expect(post.get("single"), list, source, "post_processor.single")
        lead, trail, seen_sequence = [], [], False
        for n, piece in enumerate(single):
            expect(piece, dict, source, f"post_processor.single[{n}]")
            if "Sequence" in piece:
                seen_sequence = True
            elif "SpecialToken" in piece:
                spec = expect(piece["SpecialToken"], dict, source, f"post_processor.single[{n}].SpecialToken")
                name = expect(spec.get("id"), str, source, f"post_processor.single[{n}].SpecialToken.id")
                (trail if seen_sequence else lead).append(name)
        ids: dict[str, int] = {}
        table = post.get("special_tokens", {})
        if isinstance(table, dict):
            for name, entry in table.items():
                if isinstance(entry, dict) and isinstance(entry.get("ids"), list) and len(entry["ids"]) == 1:
                    index = entry["ids"][0]
                    if isinstance(index, int) and not isinstance(index, bool):
                        ids[name] = index
        return {"kind": "template", "lead": lead, "trail": trail, "ids": ids}
    if kind == "Sequence":
        if depth > 8:
            raise FormatError(f"{source}: post_processor Sequences nested more than 8 deep")
        for n, part in enumerate(expect(post.get("processors"), list, source, "post_processor.processors")):
            found = _post_processor_framing(part, source, depth + 1)
            if found.get("kind") in ("cls_sep", "template"):
                return found
    return {}


# ----------------------------------------------------------------------------- tokenizer.json


def _token_types(tokens: list[str], types: list[int], added: list[AddedToken], *, unk_id: int | None,
                 byte_pieces: bool) -> None:
    if byte_pieces:
        for index, token in enumerate(tokens):
            if types[index] == TOKEN_NORMAL and _BYTE_PIECE.match(token):
                types[index] = TOKEN_BYTE
    if unk_id is not None and 0 <= unk_id < len(types):
        types[unk_id] = TOKEN_UNKNOWN
    for token in added:
        types[token.id] = TOKEN_CONTROL if token.special else TOKEN_USER_DEFINED


@dataclass
class _ModelTable:
    """What one model kind's reader makes of ``model``: the dense token table and the
    family-specific fields of VocabData."""

    family: str
    tokens: list[str]
    types: list[int]
    unk_id: int | None = None
    scores: list[float] | None = None
    merges: list[tuple[str, str]] | None = None
    token_bytes: list[bytes | None] | None = None
    normalizer: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    pre_name: str | None = None


@dataclass
class _Pipeline:
    """The flattened normaliser / pre-tokenizer / decoder parts of a tokenizer.json."""

    normalizers: list[dict]
    pretokenizers: list[dict]
    decoders: list[dict]


def _dense_table(by_id: dict[int, str], added: list[AddedToken], source: str) -> tuple[list[str], list[int]]:
    """Model ids plus added tokens (which may extend past them) as a dense table."""
    for token in added:
        by_id[token.id] = token.content
    return tokens_from_ids(by_id, source)


def _unigram_table(model: dict, added: list[AddedToken], parts: _Pipeline, source: str) -> _ModelTable:
    """Unigram: [piece, score] pairs, unk_id, byte_fallback; SentencePiece-style normaliser flags."""
    items = expect(model.get("vocab"), list, source, "model.vocab")
    by_id: dict[int, str] = {}
    score_by_id: dict[int, float] = {}
    for n, item in enumerate(items):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], (int, float)) and not isinstance(item[1], bool)):
            raise FormatError(f"{source}: model.vocab[{n}] should be [piece, score], got {str(item)[:60]}")
        by_id[n] = item[0]
        try:
            score_by_id[n] = float(item[1])
        except OverflowError:  # an integer literal of 400 digits is valid JSON
            raise FormatError(f"{source}: model.vocab[{n}] has a score no float can hold ({str(item[1])[:20]}...)") from None
    unk_id = expect(model.get("unk_id"), int, source, "model.unk_id", optional=True)
    tokens, types = _dense_table(by_id, added, source)
    if unk_id is not None and not 0 <= unk_id < len(tokens):
        raise FormatError(f"{source}: model.unk_id = {unk_id} is outside the vocabulary")
    table = _ModelTable("unigram", tokens, types, unk_id=unk_id,
                        scores=[score_by_id.get(i, 0.0) for i in range(len(tokens))])
    table.options["byte_fallback"] = bool(_flag(model, "byte_fallback", source, "model", False))
    _unigram_normalizer(parts.normalizers, parts.pretokenizers, table.normalizer, source)
    return table


def _bpe_table(model: dict, added: list[AddedToken], parts: _Pipeline, source: str) -> _ModelTable:
    """BPE: vocab + merges; byte-level (a ByteLevel part) or SentencePiece-style (scores from merge order)."""
    tokens, types = _dense_table(vocab_from_mapping(model.get("vocab"), source, "model.vocab"), added, source)
    merges = parse_merges(model.get("merges", []), source)
    token_index = {t: i for i, t in enumerate(tokens)}
    prefix = expect(model.get("continuing_subword_prefix"), str, source, "model.continuing_subword_prefix", optional=True)
    check_merges(merges, token_index, source, prefix or "")
    unk = expect(model.get("unk_token"), str, source, "model.unk_token", optional=True)
    table = _ModelTable("bpe_byte", tokens, types, merges=merges, unk_id=token_index.get(unk) if unk is not None else None)
    for key in ("byte_fallback", "fuse_unk", "ignore_merges"):
        table.options[key] = bool(_flag(model, key, source, "model", False))
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        value = expect(model.get(key), str, source, f"model.{key}", optional=True)
        if value:
            table.options[key] = value
    if unk is not None:
        table.options["unk_token"] = unk
    if any(c.get("type") == "ByteLevel" for c in parts.pretokenizers + parts.decoders):
        # an added token the model does not have is never a BPE result (nor a whole-word lookup
        # with ignore_merges); a special one that is also a model token (its id in model.vocab)
        # still is: the engine is told so (its bytes stay None, as for every special token)
        model_vocab = model["vocab"] if isinstance(model.get("vocab"), dict) else {}
        in_model = {a.id for a in added if model_vocab.get(a.content) == a.id}
        no_bytes = {a.id for a in added if a.special or a.id not in in_model}
        # an id the vocab skips (a hole) has no token in tokenizers: it decodes to nothing
        table.token_bytes = [None if i in no_bytes else b"" if kind == TOKEN_UNUSED else try_gpt2_to_bytes(t)
                             for i, (t, kind) in enumerate(zip(tokens, types))]
        model_specials = sorted(a.id for a in added if a.special and a.id in in_model)
        if model_specials:
            table.options["model_special_ids"] = model_specials
        # said either way: without it the engine takes the NFC of the split's table entry (Qwen2's)
        table.normalizer["nfc"] = any(c.get("type") == "NFC" for c in parts.normalizers)
        table.pre_name = _split_pre_name(parts.pretokenizers, bool(table.normalizer.get("nfc")))
    else:
        # SentencePiece-style BPE saved by tokenizers (Llama-2): scores follow merge order
        table.family = "spm_bpe"
        table.scores = _scores_from_merges(tokens, merges)
        table.options["scores_from_merges"] = True
        _unigram_normalizer(parts.normalizers, parts.pretokenizers, table.normalizer, source)
    return table


def _wordpiece_table(model: dict, added: list[AddedToken], parts: _Pipeline, source: str) -> _ModelTable:
    """WordPiece: vocab, unk, ## prefix, word length limit; BERT normaliser flags."""
    by_id = vocab_from_mapping(model.get("vocab"), source, "model.vocab")
    added_only = sorted({a.id for a in added if by_id.get(a.id) != a.content})  # tokens the model does not have
    tokens, types = _dense_table(by_id, added, source)
    unk = expect(model.get("unk_token", "[UNK]"), str, source, "model.unk_token")
    prefix = expect(model.get("continuing_subword_prefix", "##"), str, source, "model.continuing_subword_prefix")
    limit = expect(model.get("max_input_chars_per_word", 100), int, source, "model.max_input_chars_per_word")
    table = _ModelTable("wordpiece", tokens, types, unk_id=tokens.index(unk) if unk in by_id.values() else None)
    table.options.update(unk_token=unk, continuing_subword_prefix=prefix, max_input_chars_per_word=limit)
    if added_only:
        table.options["added_only_ids"] = added_only
    table.normalizer.update(lowercase=False, strip_accents=None, clean_text=False, handle_chinese_chars=False)
    for node in parts.normalizers:
        if node.get("type") == "BertNormalizer":
            table.normalizer.update(
                lowercase=bool(_flag(node, "lowercase", source, "normalizer", True)),
                strip_accents=_flag(node, "strip_accents", source, "normalizer", None),
                clean_text=bool(_flag(node, "clean_text", source, "normalizer", True)),
                handle_chinese_chars=bool(_flag(node, "handle_chinese_chars", source, "normalizer", True)),
            )
        elif node.get("type") == "Lowercase":
            table.normalizer["lowercase"] = True
    return table


def _wordlevel_table(model: dict, added: list[AddedToken], parts: _Pipeline, source: str) -> _ModelTable:
    """WordLevel: a whole-word lookup (served by labkit's pipeline engine and hf)."""
    tokens, types = _dense_table(vocab_from_mapping(model.get("vocab"), source, "model.vocab"), added, source)
    unk = expect(model.get("unk_token"), str, source, "model.unk_token", optional=True)
    return _ModelTable("wordlevel", tokens, types, unk_id=tokens.index(unk) if unk in tokens else None)


_MODEL_TABLES = {"Unigram": _unigram_table, "BPE": _bpe_table, "WordPiece": _wordpiece_table,
                 "WordLevel": _wordlevel_table}


def _model_kind(model: dict, source: str) -> str:
    kind = model.get("type")
    if kind is None:  # files written before "type" existed: infer it
        kind = "BPE" if "merges" in model else "Unigram" if isinstance(model.get("vocab"), list) else "WordPiece"
    expect(kind, str, source, "model.type")
    if kind not in _MODEL_TABLES:
        raise FormatError(f"{source}: model type {kind!r} is not supported (labkit reads {', '.join(_MODEL_TABLES)})")
    return kind


def _metadata(doc: dict, kind: str, table: _ModelTable, framing: dict, raw_text: str | None) -> dict[str, Any]:
    """What engines read besides the tables: the raw file, the components, why labkit refuses."""
    metadata: dict[str, Any] = {
        "tokenizer_json": raw_text if raw_text is not None else json.dumps(doc, ensure_ascii=False),
        "model_type": kind,
        "post_processor_framing": framing,
        "normalizer": doc.get("normalizer"),
        "pre_tokenizer": doc.get("pre_tokenizer"),
        "decoder": doc.get("decoder"),
        "labkit_refusal": labkit_refusal(doc, family=table.family, split_known=table.pre_name is not None),
        "labkit_pipeline_refusal": pipeline_refusal(doc),
    }
    for key in ("padding", "truncation"):
        if doc.get(key) is not None:
            metadata[key] = doc[key]
    return metadata


def hf_json_to_vocab(doc: Any, source: str, *, raw_text: str | None = None, pre: str | None = None) -> VocabData:
    """Turn a parsed tokenizer.json into VocabData (tokenizer_config.json is applied separately).

    Example:
        >>> import json
        >>> from labkit.paths import data_path
        >>> from labkit.formats.hf_json import hf_json_to_vocab
        >>> text = data_path("hf/all-MiniLM-L6-v2/tokenizer.json").read_text()
        >>> hf_json_to_vocab(json.loads(text), "tokenizer.json").model
        'wordpiece'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    expect(doc, dict, source, "the top level")
    model = expect(doc.get("model"), dict, source, "model")
    kind = _model_kind(model, source)
    check_components(doc, source)
    added = parse_added_tokens(doc.get("added_tokens", []), source)
    parts = _Pipeline(_components(doc.get("normalizer"), source, "normalizer"),
                      _components(doc.get("pre_tokenizer"), source, "pre_tokenizer"),
                      _components(doc.get("decoder"), source, "decoder"))
    table = _MODEL_TABLES[kind](model, added, parts, source)
    _token_types(table.tokens, table.types, added, unk_id=table.unk_id,
                 byte_pieces=bool(table.options.get("byte_fallback")))
    specials = SpecialTokens()
    if table.unk_id is not None:
        specials.unk, specials.unk_id = table.tokens[table.unk_id], table.unk_id
    framing = _post_processor_framing(doc.get("post_processor"), source)
    vocab = VocabData(
        source=source, format="hf_json", model=table.family, tokens=table.tokens, token_types=table.types,
        scores=table.scores, merges=table.merges, token_bytes=table.token_bytes,
        pre=pre if pre is not None else table.pre_name, normalizer=table.normalizer, options=table.options,
        specials=specials, added_tokens=added, metadata=_metadata(doc, kind, table, framing, raw_text),
    )
    _apply_framing(vocab, framing)
    return vocab


def _scores_from_merges(tokens: list[str], merges: list[tuple[str, str]]) -> list[float]:
    """SentencePiece BPE merges the pair whose result scores highest: the first merge
    gets the highest score; tokens made by no merge sit below every merge result."""
    index = {t: i for i, t in enumerate(tokens)}
    scores = [-float(len(merges) + i) for i in range(len(tokens))]
    for rank, (left, right) in enumerate(merges):
        made = index.get(left + right)
        if made is not None and scores[made] < -rank:
            scores[made] = -float(rank)
    return scores


def _unigram_normalizer(normalizers: list[dict], pretokenizers: list[dict], out: dict, source: str) -> None:
    """SentencePiece-style flags from HF parts: Precompiled charsmap, Metaspace prefix, ..."""
    out.update(charsmap=None, add_dummy_prefix=False, remove_extra_whitespaces=False,
               escape_whitespaces=False, treat_whitespace_as_suffix=False)
    for node in normalizers:
        kind = node.get("type")
        if kind == "Precompiled":
            blob = expect(node.get("precompiled_charsmap"), str, source, "normalizer.precompiled_charsmap", optional=True)
            if blob:
                try:
                    out["charsmap"] = charsmap_from_base64(blob, f"{source}: normalizer")
                except LabkitError as exc:
                    raise FormatError(str(exc)) from None
        elif kind == "Prepend" and node.get("prepend") == "\u2581":
            out["add_dummy_prefix"] = True
        elif kind == "Replace" and node.get("content") == "\u2581":
            out["escape_whitespaces"] = True
        elif kind == "Replace" and isinstance(node.get("pattern"), dict) and node["pattern"].get("Regex") == " {2,}":
            out["remove_extra_whitespaces"] = True
        elif kind == "Strip":
            out["remove_extra_whitespaces"] = True
    for node in pretokenizers:
        if node.get("type") == "Metaspace":
            out["escape_whitespaces"] = True
            scheme = node.get("prepend_scheme")
            if scheme is None:
                scheme = "always" if node.get("add_prefix_space", True) else "never"
            expect(scheme, str, source, "pre_tokenizer.prepend_scheme")
            out["add_dummy_prefix"] = scheme != "never"
            out["prepend_scheme"] = scheme


def _apply_framing(vocab: VocabData, framing: dict[str, Any]) -> None:
    """Set add_cls_sep / add_bos / add_eos from what the post-processor adds."""
    sp = vocab.specials
    index = {a.content: a.id for a in vocab.added_tokens}

    def find(name: str, hint: int | None = None) -> int | None:
        if hint is not None and 0 <= hint < len(vocab.tokens):
            return hint
        if name in index:
            return index[name]
        try:
            return vocab.tokens.index(name)
        except ValueError:
            return None

    if framing.get("kind") == "cls_sep":
        for name in ("cls", "sep"):
            if name in framing:
                token, hint = framing[name]
                setattr(sp, name, token)
                setattr(sp, f"{name}_id", find(token, hint))
        sp.add_cls_sep = True
    elif framing.get("kind") == "template":
        lead, trail, ids = framing["lead"], framing["trail"], framing["ids"]
        if len(lead) == 1 and len(trail) == 1 and vocab.model == "wordpiece":
            sp.cls, sp.cls_id = lead[0], find(lead[0], ids.get(lead[0]))
            sp.sep, sp.sep_id = trail[0], find(trail[0], ids.get(trail[0]))
            sp.add_cls_sep = True
        else:
            if len(lead) == 1:
                sp.bos, sp.bos_id, sp.add_bos = lead[0], find(lead[0], ids.get(lead[0])), True
            if len(trail) == 1:
                sp.eos, sp.eos_id, sp.add_eos = trail[0], find(trail[0], ids.get(trail[0])), True
                sp.eos_ids = (sp.eos_id,) if sp.eos_id is not None else ()


def read_hf_json(path, *, pre: str | None = None, data: bytes | None = None, doc: Any = None) -> VocabData:
    """Read a tokenizer.json alone (``labkit.formats.detect.read_vocab`` also applies the
    tokenizer_config.json and chat template files beside it, see ``formats/hf_config.py``).

    Example:
        >>> from labkit.formats.hf_json import read_hf_json
        >>> from labkit.paths import data_path
        >>> read_hf_json(data_path("hf/all-MiniLM-L6-v2/tokenizer.json")).specials.cls_id
        101

    Introduced in notebook ``11_factory_formats_hub``.
    """
    source = str(path)
    if data is None:
        data = read_bytes(path, "tokenizer.json")
    if doc is None:
        doc = parse_json(data, source)
    raw = data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data
    return hf_json_to_vocab(doc, source, raw_text=raw.decode("utf-8"), pre=pre)
