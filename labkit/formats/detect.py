"""Tell a tokenizer file's format from its content, and read any file or folder into VocabData.

The extension is only a hint: a GGUF file starts with the magic ``GGUF``; a SentencePiece
``.model`` is a protobuf whose first record is a piece (field 1) holding a UTF-8 string; a
``.tiktoken`` file is ``base64 rank`` lines; JSON starts with ``{`` after an optional UTF-8
BOM and its keys say which JSON it is; ``vocab.txt`` is one token per line.
Introduced in notebook ``11_factory_formats_hub`` (file sniffing).

Example:
    >>> from labkit.formats.detect import sniff
    >>> sniff("data/gguf/ggml-vocab-gpt-2.gguf")
    'gguf'
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from labkit.core import FormatError, LabkitError, VocabData
from labkit.formats.files import check_regular_file, limit_name, present, read_bytes
from labkit.formats.hf_config import apply_folder_files, apply_template_files
from labkit.formats.files import UTF8_BOM
from labkit.formats.hf_json import parse_json

# what sniff() can answer
FORMATS = (
    "gguf",               # llama.cpp GGUF (tokenizer.ggml.* keys)
    "hf_json",            # tokenizers' tokenizer.json
    "tokenizer_config",   # transformers' tokenizer_config.json
    "chat_template_json", # chat_template.json ({"chat_template": ...})
    "vocab_json",         # GPT-2 vocab.json {token: id}
    "merges_txt",         # GPT-2 merges.txt
    "spm_model",          # SentencePiece ModelProto
    "tiktoken",           # base64 token, rank per line
    "vocab_txt",          # WordPiece vocab.txt
)
_HEAD = 1 << 16
_TIKTOKEN_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2} \d+\Z")
_CONFIG_KEYS = ("tokenizer_class", "added_tokens_decoder", "model_max_length", "chat_template",
                "bos_token", "eos_token", "unk_token", "pad_token", "cls_token", "sep_token", "mask_token",
                "add_bos_token", "add_eos_token", "do_lower_case", "clean_up_tokenization_spaces")
# text files whose first character may be '{' without being JSON (a token, a merge)
_TEXT_NAMES = ("vocab.txt", "merges.txt")
# folder contents, in the order they are preferred
_FOLDER_ORDER = ("tokenizer.json", "*.model", "*.tiktoken", "vocab.json", "vocab.txt", "*.gguf")


def _json_kind(doc: Any, source: str) -> str:
    if isinstance(doc, dict):
        if isinstance(doc.get("model"), dict):
            return "hf_json"
        if set(doc) == {"chat_template"}:
            return "chat_template_json"
        if doc and all(isinstance(v, int) and not isinstance(v, bool) for v in doc.values()):
            return "vocab_json"
        if any(key in doc for key in _CONFIG_KEYS):
            return "tokenizer_config"
        if any(isinstance(v, int) and not isinstance(v, bool) for v in doc.values()):
            return "vocab_json"  # with a few ids that are not numbers: its reader names the first
        keys = ", ".join(sorted(map(str, doc))[:6])
        raise FormatError(f"{source}: JSON object with keys [{keys}] is not a tokenizer file "
                          "(tokenizer.json needs a 'model' object)")
    raise FormatError(f"{source}: JSON {type(doc).__name__} is not a tokenizer file (expected an object)")


def _text_kind(head: bytes, name: str, complete: bool) -> str | None:
    """tiktoken / merges.txt / vocab.txt from the first lines, or None."""
    if not complete:
        head = head[: head.rfind(b"\n") + 1] or head  # do not judge a line cut in half
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    if name == "merges.txt":  # its merges may all look like 'base64 rank' lines ('a 1'), or be none
        return "merges_txt"
    lines = [line.rstrip("\r") for line in text.split("\n")[:200]]
    sample = [line for line in lines if line.strip()]
    if not sample:
        return None
    if all(_TIKTOKEN_LINE.match(line) for line in sample):
        return "tiktoken"
    if sample[0].startswith("#version"):
        return "merges_txt"
    if all(line.count(" ") == 1 and not line.startswith(" ") and not line.endswith(" ") for line in sample):
        return "merges_txt"
    if any("\t" in line for line in sample[:20]) and name.endswith(".vocab"):
        return None  # sentencepiece's human-readable .vocab: not loadable on its own
    if all(" " not in line.strip() for line in sample) and (
            all(line for line in lines[:-1]) or Path(name).name == "vocab.txt"):
        return "vocab_txt"  # a vocab.txt with an empty line: its reader says which line
    return None


def sniff_bytes(data: bytes, name: str = "", *, complete: bool = True) -> tuple[str, Any]:
    """Classify file content; returns (format, parsed JSON or None). FormatError if unknown.

    ``complete`` says whether ``data`` is the whole file (a head may cut JSON short).
    Example:
        >>> from labkit.formats.detect import sniff_bytes
        >>> sniff_bytes(b"GGUF\\x03\\x00\\x00\\x00")[0]
        'gguf'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    source = name or "<bytes>"
    if not data:
        raise FormatError(f"{source}: file is empty")
    if data[:4] == b"GGUF":
        return "gguf", None
    body = data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data
    first = body.lstrip(b" \t\r\n")[:1]
    json_error = None
    if first in (b"{", b"["):
        try:
            doc = parse_json(data, source)
        except FormatError as exc:
            if (first == b"{" and Path(name).name not in _TEXT_NAMES) or not complete:
                raise
            json_error = exc  # '[' also starts BERT's vocab.txt ("[PAD]"); '{' may start a token or a merge
        else:
            return _json_kind(doc, source), doc
    from labkit.formats.spm_model import looks_like_model_proto

    if not data.startswith(UTF8_BOM) and looks_like_model_proto(data):
        return "spm_model", None
    kind = _text_kind(data, Path(name).name, complete)
    if kind is not None:
        return kind, None
    if json_error is not None:
        raise json_error
    head = bytes(data[:16])
    raise FormatError(
        f"{source}: unknown format (starts with {head!r}); labkit reads GGUF, tokenizer.json, "
        "SentencePiece .model, .tiktoken, vocab.json+merges.txt and vocab.txt"
    )


def sniff(path) -> str:
    """The format of a tokenizer file (or of the file a folder would be read from), by content.

    Example:
        >>> from labkit.formats.detect import sniff
        >>> from labkit.paths import data_path
        >>> sniff(data_path("sentencepiece/botchan_en_bpe_1000.model"))
        'spm_model'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    path = _as_path(path)
    if path.is_dir():
        path = pick_folder_file(path)
    head = _read_head(path, _HEAD + 1)
    complete = len(head) <= _HEAD
    body = head[len(UTF8_BOM):] if head.startswith(UTF8_BOM) else head
    if not complete and body.lstrip(b" \t\r\n")[:1] in (b"{", b"["):
        head, complete = read_bytes(path), True  # JSON is classified by its keys: parse it all
    return sniff_bytes(head, str(path), complete=complete)[0]


def _as_path(path) -> Path:
    if isinstance(path, Path):
        out = path
    elif isinstance(path, str) and path:
        out = Path(path)
    else:
        raise FormatError(f"expected a file or folder path, got {path!r}")
    if not out.exists():
        raise FormatError(f"{out}: no such file or folder")
    if not out.is_dir() and not out.is_file():
        # reading a pipe or a device (/dev/zero) would block or never end
        raise FormatError(f"{out}: not a regular file or folder (a pipe, device or socket)")
    return out


def pick_folder_file(folder: Path) -> Path:
    """The file a folder is read from: tokenizer.json, else a .model, a .tiktoken,
    vocab.json (+ merges.txt), vocab.txt, or a .gguf.

    A folder written by labkit's export names its source file in tokenizer_config.json
    (``labkit_source``): that file is read, so the reload matches what was exported.
    Example:
        >>> from labkit.formats.detect import pick_folder_file
        >>> from labkit.paths import data_path
        >>> pick_folder_file(data_path("hf/all-MiniLM-L6-v2")).name
        'tokenizer.json'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    exported = _exported_source(folder)
    if exported is not None:
        return exported
    for pattern in _FOLDER_ORDER:
        if "*" not in pattern:
            candidate = folder / pattern
            if candidate.is_file():
                return candidate
            continue
        found = sorted(p for p in folder.glob(pattern) if p.is_file())
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            preferred = folder / ("tokenizer" + pattern[1:])
            if preferred in found:
                return preferred
            names = ", ".join(p.name for p in found[:5])
            raise FormatError(f"{folder}: several {pattern} files ({names}); load one of them by path")
    raise FormatError(
        f"{folder}: no tokenizer file in this folder (looked for {', '.join(_FOLDER_ORDER)}, and vocab.json needs merges.txt)"
    )


def _exported_source(folder: Path) -> Path | None:
    """The source file a labkit export copied beside its tokenizer.json, if any."""
    config_path = folder / "tokenizer_config.json"
    if not present(config_path):
        return None
    from labkit.formats.hf_json import load_json_file

    config = load_json_file(config_path)
    name = config.get("labkit_source") if isinstance(config, dict) else None
    if name is None:
        return None
    if not isinstance(name, str) or Path(name).name != name or not (folder / name).is_file():
        raise FormatError(f"{config_path}: labkit_source should name a file in this folder, got {str(name)[:60]!r}")
    return folder / name


def read_vocab(path, *, pre: str | None = None) -> VocabData:
    """Read a tokenizer file or folder into VocabData, choosing the reader by content.

    A folder is read from :func:`pick_folder_file`; ``tokenizer_config.json`` and chat
    template files beside a tokenizer.json, .model, vocab.json or vocab.txt are applied.
    ``pre`` overrides the pre-tokenizer name of byte-level BPE vocabularies.
    Example:
        >>> from labkit.formats.detect import read_vocab
        >>> from labkit.paths import data_path
        >>> read_vocab(data_path("hf/all-MiniLM-L6-v2")).specials.cls
        '[CLS]'

    Introduced in notebook ``11_factory_formats_hub``.
    """
    if pre is not None and not isinstance(pre, str):
        raise FormatError(f"pre= must be a pre-tokenizer name (str), got {type(pre).__name__}")
    path = _as_path(path)
    if path.is_dir():
        path = pick_folder_file(path)
    if _read_head(path, 4) == b"GGUF":
        from labkit.formats.gguf import read_gguf

        vocab = read_gguf(path, pre=pre)  # mapped, not read: model files can be gigabytes
        apply_template_files(vocab, path.parent)  # template files beside a GGUF win over its key
        return _checked_charsmap(vocab)
    data = read_bytes(path, limit_name(path))
    kind, doc = sniff_bytes(data, str(path))
    return _checked_charsmap(_read_kind(kind, path, data, doc, pre))


def _checked_charsmap(vocab: VocabData) -> VocabData:
    """The vocabulary, once its precompiled charsmap (if any) is one every engine can read:
    ``tokenizers`` aborts the process on some corrupt ones, so no engine may see them."""
    blob = (vocab.normalizer or {}).get("charsmap")
    if blob:
        from labkit.algorithms.charsmap import check_charsmap

        try:
            check_charsmap(blob)
        except LabkitError as exc:
            raise FormatError(f"{vocab.name}: {exc}") from None
    return vocab


def _read_head(path: Path, size: int) -> bytes:
    check_regular_file(path, limit=1 << 62)  # a pipe would block the read; size is checked by the reader
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _read_kind(kind: str, path: Path, data: bytes, doc: Any, pre: str | None) -> VocabData:
    folder = path.parent
    if kind == "gguf":
        from labkit.formats.gguf import read_gguf

        vocab = read_gguf(path, pre=pre, data=data)
        apply_template_files(vocab, folder)
        return vocab
    if kind == "hf_json":
        from labkit.formats.hf_json import read_hf_json

        vocab = read_hf_json(path, pre=pre, data=data, doc=doc)
        # a tokenizer.json post-processor stays in charge of BOS/EOS framing
        framing = bool(vocab.metadata["post_processor_framing"])
        apply_folder_files(vocab, folder, framing_from_post_processor=framing)
        return vocab
    if kind == "tiktoken":
        from labkit.formats.tiktoken_file import read_tiktoken

        vocab = read_tiktoken(path, pre=pre, data=data)
        apply_template_files(vocab, folder)
        return vocab
    if kind == "spm_model":
        from labkit.formats.spm_model import read_spm_model

        vocab = read_spm_model(path, data=data)
    elif kind in ("vocab_json", "merges_txt"):
        from labkit.formats.vocab_merges import find_pair, read_vocab_merges

        vocab_path, merges_path = find_pair(path)
        vocab = read_vocab_merges(vocab_path, merges_path, pre=pre)
    elif kind == "vocab_txt":
        from labkit.formats.vocab_merges import read_vocab_txt

        vocab = read_vocab_txt(path, data=data)
    elif kind in ("tokenizer_config", "chat_template_json"):
        # the side files of a vocabulary: read the vocabulary in their folder instead
        main = pick_folder_file(folder)
        if main == path:
            raise FormatError(f"{path}: a {kind} file holds no vocabulary")
        return read_vocab(main, pre=pre)
    else:  # pragma: no cover - sniff_bytes only answers FORMATS
        raise LabkitError(f"{path}: no reader for format {kind!r}")
    apply_folder_files(vocab, folder)
    return vocab
