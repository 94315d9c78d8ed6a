"""Tokenizers for the tests, built once per (bundled name, engine).

A pair that the engine cannot serve (EngineUnavailable, e.g. tiktoken over a WordPiece
vocab) is skipped; any other failure while building is an error, never a skip.
"""
from __future__ import annotations

import functools

import pytest

from labkit.core import EngineUnavailable
from labkit.factory import build_engine
from labkit.formats.detect import read_vocab
from labkit.paths import bundled_path


@functools.lru_cache(maxsize=None)
def vocab_of(name: str):
    return read_vocab(bundled_path(name))  # read once, shared by the engines built over it


@functools.lru_cache(maxsize=None)
def _build(name: str, engine: str):
    try:
        return build_engine(vocab_of(name), engine)
    except EngineUnavailable as exc:
        return exc


def tokenizer(name: str, engine: str):
    """The tokenizer for (name, engine); skip the test if that engine cannot serve the file."""
    tok = _build(name, engine)
    if isinstance(tok, EngineUnavailable):
        pytest.skip(f"{name}/{engine}: {tok}")
    return tok
