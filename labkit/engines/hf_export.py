"""Export any loaded tokenizer to a ``tokenizer.json`` that the ``tokenizers`` library loads.

Lives beside the hf engine because it reuses it: a reader (``labkit/formats``) never builds
an engine. The reference engine already assembles a ``tokenizers.Tokenizer`` from labkit's plain data
(for a GGUF, a SentencePiece model or a tiktoken file alike); exporting is serialising that
pipeline, with padding and truncation off, written atomically so a failed export never
leaves a half-written file behind. Introduced in notebook ``11_factory_formats_hub``.

Example: ``export_tokenizer_json(labkit.load("cl100k_base"), "cl100k/tokenizer.json")``
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import tokenizers

from labkit.core import LabkitError, Tokenizer
from labkit.engines.hf import build as build_hf_engine


def to_tokenizers(tok: Tokenizer) -> tokenizers.Tokenizer:
    """A fresh ``tokenizers.Tokenizer`` equivalent to ``tok`` (padding and truncation off)."""
    if not isinstance(tok, Tokenizer):
        raise LabkitError(f"export takes a labkit Tokenizer, got {type(tok).__name__}")
    reference = tok if tok.engine == "hf" else build_hf_engine(tok.vocab)
    backend = tokenizers.Tokenizer.from_str(reference.backend.to_str())
    backend.no_padding()
    backend.no_truncation()
    return backend


def to_tokenizer_json(tok: Tokenizer, pretty: bool = True) -> str:
    """The tokenizer.json text for ``tok``."""
    return to_tokenizers(tok).to_str(pretty=pretty)


def export_tokenizer_json(tok: Tokenizer, path) -> Path:
    """Write ``tokenizer.json`` for ``tok`` at ``path`` (a file, or a folder to hold one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "tokenizer.json"
    text = to_tokenizer_json(tok)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tokenizer.", suffix=".json.part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
