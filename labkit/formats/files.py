"""Reading a tokenizer file's bytes, the same way for every reader.

Example: ``file_bytes("data/tiktoken/cl100k_base.tiktoken")[:4]`` -> ``b'IQ== '``
Introduced in notebook ``11_factory_formats_hub``.
"""
from __future__ import annotations

from pathlib import Path

from labkit.core import FormatError


def read_bytes(path) -> bytes:
    """A file's bytes; a missing or unreadable file is a FormatError naming it.

    Example: ``read_bytes(data_path("hf/all-MiniLM-L6-v2/vocab.txt"))[:5]`` -> ``b'[PAD]'``
    """
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror or exc})") from None


def file_bytes(path, data: bytes | None = None) -> bytes:
    """``data`` if given (already read), else the file's bytes; an empty file is a FormatError.

    Example: ``file_bytes(p, b"")`` raises ``FormatError: p: file is empty``
    """
    if data is None:
        data = read_bytes(path)
    if not data:
        raise FormatError(f"{path}: file is empty")
    return data
