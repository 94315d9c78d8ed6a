"""Reading a tokenizer file's bytes, the same way for every reader: a regular file only, its
size checked against the format's limit before a byte is read.

Example:
    >>> from labkit.formats.files import file_bytes
    >>> file_bytes("data/tiktoken/cl100k_base.tiktoken")[:4]
    b'IQ=='

Introduced in notebook ``11_factory_formats_hub``.
"""
from __future__ import annotations

import os
import stat

from labkit.core import FormatError

MiB = 1 << 20
# the largest file each reader accepts; real ones are far smaller (a 256k-token
# tokenizer.json is about 35 MiB, a .model 5 MiB, cl100k's .tiktoken 1.7 MiB)
SIZE_LIMITS = {
    "tokenizer.json": 128 * MiB,
    "gguf header": 256 * MiB,  # a GGUF's tensors may be gigabytes: only its first 256 MiB are mapped
    "spm_model": 64 * MiB,
    "tiktoken": 64 * MiB,
    "vocab_merges": 128 * MiB,
    "vocab.txt": 32 * MiB,
    "file": 128 * MiB,
}


def check_regular_file(path, limit: int | None = None, what: str = "file") -> int:
    """The size of ``path`` after checking it is a regular file within ``limit`` bytes; a
    pipe, device, socket or folder (which would block or never end) or a file too large is
    a FormatError naming it, raised before anything is read.

    Example:
        >>> from labkit.formats.files import check_regular_file
        >>> check_regular_file("/dev/zero")
        Traceback (most recent call last):
            ...
        labkit.core.FormatError: /dev/zero: not a regular file (a folder, pipe, device or socket)
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise FormatError(f"{path}: not a regular file (a folder, pipe, device or socket)")
    limit = SIZE_LIMITS[what] if limit is None else limit
    if info.st_size > limit:
        raise FormatError(f"{path}: {info.st_size:,} bytes is more than the {limit:,} a {what} may have")
    return info.st_size


def present(path) -> bool:
    """True when anything is at ``path``, even a pipe, a folder or a dangling link: a companion file
    (tokenizer_config.json) that is there but not readable is refused by the reader, never skipped.

    Example:
        >>> from labkit.formats.files import present
        >>> present("/dev/null"), present("/no/such/file")
        (True, False)
    """
    return os.path.lexists(path)


def read_bytes(path, what: str = "file", limit: int | None = None) -> bytes:
    """A regular file's bytes within the ``what`` size limit; a missing, unreadable,
    special or oversized file is a FormatError naming it.

    Example:
        >>> from labkit.formats.files import read_bytes
        >>> from labkit.paths import data_path
        >>> read_bytes(data_path("hf/all-MiniLM-L6-v2/vocab.txt"), "vocab.txt")[:5]
        b'[PAD]'
    """
    limit = SIZE_LIMITS[what] if limit is None else limit
    check_regular_file(path, limit, what)
    try:
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped since the stat
                raise FormatError(f"{path}: not a regular file")
            data = handle.read(limit + 1)  # the file may grow between stat and read
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise FormatError(f"{path}: more than the {limit:,} bytes a {what} may have")
    return data


def limit_name(path) -> str:
    """Which of SIZE_LIMITS a file is read under, from its name (before a byte is read).

    Example:
        >>> from labkit.formats.files import limit_name
        >>> limit_name("x/botchan.model"), limit_name("x/merges.txt"), limit_name("x/notes.bin")
        ('spm_model', 'vocab_merges', 'file')
    """
    name = os.path.basename(str(path))
    if name.endswith(".model"):
        return "spm_model"
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name == "vocab.txt":
        return "vocab.txt"
    if name in ("vocab.json", "merges.txt"):
        return "vocab_merges"
    if name.endswith(".json"):
        return "tokenizer.json"
    return "file"


def file_bytes(path, data: bytes | None = None, what: str = "file") -> bytes:
    """``data`` if given (already read), else the file's bytes; an empty file is a FormatError.

    Example:
        >>> file_bytes("p.json", b"")
        Traceback (most recent call last):
        labkit.core.FormatError: p.json: file is empty
    """
    if data is None:
        data = read_bytes(path, what)
    elif len(data) > SIZE_LIMITS[what]:  # read under another name's limit: this format's own holds too
        raise FormatError(f"{path}: {len(data):,} bytes is more than the {SIZE_LIMITS[what]:,} a {what} may have")
    if not data:
        raise FormatError(f"{path}: file is empty")
    return data


UTF8_BOM = b"\xef\xbb\xbf"


def utf8_text(data: bytes, source: str) -> str:
    """A text file's bytes as str: a leading BOM dropped (editors on Windows write one),
    anything that is not UTF-8 a FormatError naming the byte.

    Example:
        >>> utf8_text(b"\\xef\\xbb\\xbfvocab", "vocab.txt")
        'vocab'
        >>> utf8_text(b"ab\\xff", "vocab.txt")
        Traceback (most recent call last):
        labkit.core.FormatError: vocab.txt: not UTF-8 text (byte 2: invalid start byte)
    """
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{source}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
