"""Export any loaded tokenizer to a folder that ``tokenizers``, transformers and labkit load.

Lives beside the hf engine because it reuses it: a reader (``labkit/formats``) never builds
an engine. The reference engine already assembles a ``tokenizers.Tokenizer`` from labkit's
plain data (for a GGUF, a SentencePiece model or a tiktoken file alike); exporting is
serialising that pipeline (padding and truncation off) as ``tokenizer.json``, with a
``tokenizer_config.json`` beside it (named special tokens, BOS/EOS flags, chat templates).

A tokenizer.json cannot say everything every source format means (SentencePiece offsets and
decoding, llama.cpp's pre-tokenizer types), so when the tokenizer came from another format
the export also copies that source file into the folder and names it in
``tokenizer_config.json`` (``"labkit_source"``): ``labkit.load(folder)`` reads it and gives
the same ids, tokens, offsets and decode as the tokenizer that was exported, while
``tokenizers`` and transformers read the tokenizer.json (for a SentencePiece ``.model`` that
file is ``tokenizers``' conversion, ``convert_model_file``, which is not exact). Every file is written atomically
with ordinary permissions. Introduced in notebook ``11_factory_formats_hub``.

Example (a SentencePiece model exported; tokenizers and labkit read the folder alike):
    >>> import tempfile
    >>> from pathlib import Path
    >>> import labkit, tokenizers
    >>> from labkit.engines.hf_export import export_tokenizer_json
    >>> tok = labkit.load("botchan-unigram")
    >>> path = export_tokenizer_json(tok, Path(tempfile.mkdtemp()) / "botchan-export")
    >>> sorted(p.name for p in path.parent.iterdir())
    ['botchan_en_unigram_1000.model', 'tokenizer.json', 'tokenizer_config.json']
    >>> ids = tok.encode("Hello world").ids
    >>> tokenizers.Tokenizer.from_file(str(path)).encode("Hello world").ids == ids == labkit.load(path.parent).encode("Hello world").ids
    True
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import tokenizers

from labkit.core import MODEL_SPM_BPE, MODEL_WORDPIECE, LabkitError, Tokenizer
from labkit.engines.hf import build as build_hf_engine
from labkit.engines.hf import convert_model_file

SOURCE_KEY = "labkit_source"  # tokenizer_config.json key naming the copied source file
_SPECIAL_NAMES = ("bos", "eos", "unk", "pad", "sep", "cls", "mask")
NOT_SERVED_GGUF = (MODEL_SPM_BPE, MODEL_WORDPIECE)  # GGUF models the hf engine refuses (llama, bert)


def to_tokenizers(tok: Tokenizer) -> tokenizers.Tokenizer:
    """A fresh ``tokenizers.Tokenizer`` equivalent to ``tok`` (padding and truncation off).

    Example:
        >>> from labkit.engines.hf_export import to_tokenizers
        >>> import labkit
        >>> to_tokenizers(labkit.load("gpt2")).encode("hi").ids
        [5303]
    """
    if not isinstance(tok, Tokenizer):
        raise LabkitError(f"export takes a labkit Tokenizer, got {type(tok).__name__}")
    if tok.vocab.format == "spm_model" or (tok.vocab.format == "gguf" and tok.vocab.model in NOT_SERVED_GGUF):
        # tokenizers' conversion of a .model or a llama/bert GGUF is not exact (the hf engine refuses
        # it): the export keeps the source beside it (SOURCE_KEY), and labkit reloads from that file
        reference = convert_model_file(tok.vocab)
    else:
        reference = tok if tok.engine == "hf" else build_hf_engine(tok.vocab)
    backend = tokenizers.Tokenizer.from_str(reference.backend.to_str())
    backend.no_padding()
    backend.no_truncation()
    return backend


def to_tokenizer_json(tok: Tokenizer, pretty: bool = True) -> str:
    """The tokenizer.json text for ``tok``.

    Example:
        >>> import json, labkit
        >>> json.loads(to_tokenizer_json(labkit.load("botchan-unigram")))["model"]["type"]
        'Unigram'
    """
    return to_tokenizers(tok).to_str(pretty=pretty)


def tokenizer_config(tok: Tokenizer, source_name: str | None = None) -> dict:
    """transformers' ``tokenizer_config.json`` for ``tok``: special tokens, BOS/EOS flags,
    chat templates, and the copied source file's name.

    Example:
        >>> from labkit.engines.hf_export import tokenizer_config
        >>> import labkit
        >>> tokenizer_config(labkit.load("qwen2"))["eos_token"]
        '<|endoftext|>'
    """
    sp = tok.vocab.specials
    config: dict = {"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False}
    for name in _SPECIAL_NAMES:
        value = getattr(sp, name, None)
        if value is not None:
            config[f"{name}_token"] = value
    config["add_bos_token"] = bool(sp.add_bos)
    config["add_eos_token"] = bool(sp.add_eos)
    templates = dict(tok.vocab.chat_templates or {})
    if tok.chat_template is not None:
        templates["default"] = tok.chat_template
    if set(templates) == {"default"}:
        config["chat_template"] = templates["default"]
    elif templates:
        config["chat_template"] = [{"name": n, "template": t} for n, t in templates.items()]
    if source_name is not None:
        config[SOURCE_KEY] = source_name
    return config


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` through a temporary file in the same folder, mode 0o666 less the umask."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; an export is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _source_file(tok: Tokenizer) -> Path | None:
    """The file a non-tokenizer.json vocabulary was read from (None for tokenizer.json)."""
    if tok.vocab.format == "hf_json":
        return None
    path = Path(tok.vocab.source)
    return path if path.is_file() else None


def export_tokenizer_json(tok: Tokenizer, path) -> Path:
    """Export ``tok`` into the folder ``path`` (created if missing): ``tokenizer.json``,
    ``tokenizer_config.json`` and, for another source format, a copy of the source file.
    A ``path`` ending in ``.json`` names the tokenizer.json itself. Returns its path.

    Example:
        >>> from labkit.engines.hf_export import export_tokenizer_json
        >>> import labkit
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> export_tokenizer_json(labkit.load("gpt2"), folder + "/gpt2-export").name
        'tokenizer.json'
    """
    path = Path(path)
    if path.suffix == ".json" and not path.is_dir():
        folder, json_path = path.parent, path
    else:
        folder, json_path = path, path / "tokenizer.json"
    if folder.exists() and not folder.is_dir():
        raise LabkitError(f"{folder}: exists and is not a folder; export writes a folder")
    text = to_tokenizer_json(tok)  # everything that can fail runs before the first write
    source = _source_file(tok)
    source_name = None
    if source is not None:
        source_name = source.name if source.name not in ("tokenizer.json", "tokenizer_config.json") else f"source{source.suffix}"
    config = tokenizer_config(tok, source_name)
    folder.mkdir(parents=True, exist_ok=True)
    if source is not None and source.resolve() != (folder / source_name).resolve():
        _write_atomic(folder / source_name, source.read_bytes())
    _write_atomic(json_path, text.encode("utf-8"))
    _write_atomic(folder / "tokenizer_config.json", json.dumps(config, ensure_ascii=False, indent=2).encode("utf-8"))
    return json_path
