"""Checkers for the "Try it" exercises of notebook 11 (files, formats and the Hub).

Each checker prints ``right`` or ``wrong`` with a hint and returns True/False.
Introduced in notebook ``11_factory_formats_hub``.

Example:
    >>> from labkit.exercises.formats import check_sniff
    >>> check_sniff("data/gguf/ggml-vocab-gpt-2.gguf", "gguf")
    right
    True
"""
from __future__ import annotations

from pathlib import Path

from labkit.core import LabkitError
from labkit.exercises import answerable, verdict as _verdict


@answerable
def check_sniff(path, answer: str) -> bool:
    """What format does labkit sniff for the file at ``path`` ('unknown' if none)?

    Example:
        >>> from labkit.exercises.formats import check_sniff
        >>> from labkit.paths import bundled_path
        >>> check_sniff(bundled_path("qwen2"), "gguf")
        right
        True

    Introduced in notebook ``11_factory_formats_hub``.
    """
    from labkit.formats.detect import sniff

    try:
        right = sniff(path)
    except LabkitError:
        right = "unknown"
    return _verdict(answer == right, "look at the first bytes: GGUF magic, a protobuf piece (0x0a), base64 lines, '{'")


@answerable
def check_error_names_file_and_place(path, message: str) -> bool:
    """Is ``message`` the LabkitError that loading ``path`` gives, naming the file and the place?

    Introduced in notebook ``11_factory_formats_hub``.

    Example (GPT-2's GGUF cut after 5,000 bytes):
        >>> import tempfile, labkit
        >>> from labkit.paths import data_path
        >>> path = Path(tempfile.mkdtemp()) / "cut.gguf"
        >>> _ = path.write_bytes(data_path("gguf/ggml-vocab-gpt-2.gguf").read_bytes()[:5000])
        >>> try:
        ...     labkit.load(path)
        ... except labkit.LabkitError as exc:
        ...     check_error_names_file_and_place(path, str(exc))
        right
        True
    """
    from labkit.factory import load

    try:
        load(Path(path))
    except LabkitError as exc:
        right = str(exc)
    else:
        return _verdict(False, "this file loads fine: damage it first (truncate it, flip a byte)")
    if message == right and Path(path).name in right:
        return _verdict(True, "")
    if isinstance(message, str) and right in message:
        hint = "pass str(exc) itself, not repr(exc) or a message around it"
    else:
        hint = "catch labkit.LabkitError as exc and pass str(exc); it names the file and where reading stopped"
    return _verdict(False, hint)


@answerable
def check_private_repo(loaded_without_token: bool, loaded_with_token: bool) -> bool:
    """Which loads of a private LocalHub repo worked: without HF_TOKEN, and with it?

    Example:
        >>> from labkit.exercises.formats import check_private_repo
        >>> check_private_repo(False, True)
        right
        True

    Introduced in notebook ``11_factory_formats_hub``.
    """
    hints = []
    if loaded_without_token is not False:
        hints.append("without the token: a private repo answers 401, like a missing repo, so the load fails")
    if loaded_with_token is not True:
        hints.append("with HF_TOKEN set to the repo's token: the load works (set it before you call labkit.load)")
    return _verdict(not hints, "; ".join(hints))
