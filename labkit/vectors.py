"""The llama.cpp reference vectors shipped beside each GGUF vocab (``.gguf.inp``/``.gguf.out``).

Inputs are read as bytes and decoded here: some are deliberately decomposed (e + U+0301)
and an editor or a normalising tool would change them.

Example:
    >>> from labkit.vectors import load_vectors
    >>> load_vectors("gpt2")[0]
    ('ied 4 ½ months', [798, 604, 25208, 1933])
"""
from __future__ import annotations

from pathlib import Path

from labkit.core import FormatError
from labkit.paths import bundled_path

SEPARATOR = "\n__ggml_vocab_test__\n"
VECTOR_NAMES = ("gpt2", "llama-spm", "qwen2", "bert-bge")


def read_vectors(gguf_path) -> list[tuple[str, list[int]]]:
    """Pairs (input text, expected ids) from ``<gguf>.inp`` and ``<gguf>.out``."""
    gguf_path = Path(gguf_path)
    inp = gguf_path.with_name(gguf_path.name + ".inp")
    out = gguf_path.with_name(gguf_path.name + ".out")
    try:
        texts = inp.read_bytes().decode("utf-8").split(SEPARATOR)
        lines = out.read_bytes().decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"{inp}: cannot read test vectors ({exc})") from None
    if texts and texts[-1] == "":
        texts.pop()  # a final separator ends the file
    if lines and lines[-1] == "":
        lines.pop()
    if len(texts) != len(lines):
        raise FormatError(f"{inp}: {len(texts)} inputs but {len(lines)} expected-id lines in {out.name}")
    return [(text, [int(x) for x in line.split()]) for text, line in zip(texts, lines)]


def load_vectors(name: str) -> list[tuple[str, list[int]]]:
    """The vectors of a bundled GGUF vocab by name ("gpt2", "llama-spm", "qwen2", "bert-bge")."""
    return read_vectors(bundled_path(name))
