"""Tokenizers for the tests, built once per (bundled name, engine) and shared by every module.

Parametrise with :func:`servable_pairs` so that a test is generated only for pairs the engine
can serve (e.g. never tiktoken over a WordPiece vocab): a failure to build is then always an
error, never a skip.
"""
from __future__ import annotations

import functools

import labkit
from labkit.core import EngineUnavailable
from labkit.factory import build_engine
from labkit.formats.detect import read_vocab
from labkit.paths import bundled_path

BUNDLED = ("gpt2", "llama-spm", "qwen2", "bert-bge", "cl100k_base", "botchan-unigram", "botchan-bpe", "minilm")
ENGINES = ("labkit", "hf", "tiktoken", "sentencepiece")


@functools.lru_cache(maxsize=None)
def vocab_of(name: str):
    """The reader's VocabData for a bundled name, read once and shared by every engine built over it."""
    return read_vocab(bundled_path(name))


@functools.lru_cache(maxsize=None)
def _attempt(name: str, engine: str):
    """The built tokenizer, or the EngineUnavailable that says the engine does not serve the file."""
    try:
        return build_engine(vocab_of(name), engine)
    except EngineUnavailable as exc:
        return exc


def tokenizer(name: str, engine: str) -> labkit.Tokenizer:
    """The tokenizer for (name, engine), built once per test session; raises if it cannot be built."""
    tok = _attempt(name, engine)
    if isinstance(tok, EngineUnavailable):
        raise tok  # a pair that servable_pairs() would not have generated
    assert tok.engine == engine
    return tok


@functools.lru_cache(maxsize=None)
def loaded(name: str, engine: str | None = None) -> labkit.Tokenizer:
    """``labkit.load(name, engine=engine)`` once per session (the full public path, chat templates too)."""
    tok = labkit.load(name, engine=engine)
    if engine is not None:
        assert tok.engine == engine
    return tok


# which engines serve each bundled file: read at collection, so that collecting a test module
# builds no tokenizer (each xdist worker collects every module; building all 32 pairs there cost
# each worker 13 s, qwen2's tiktoken alone 5 s). test_servable_table_is_what_the_engines_build
# builds every pair once and checks this table against what the factory does.
SERVABLE = {
    "gpt2": ("labkit", "hf", "tiktoken"),
    "llama-spm": ("labkit", "sentencepiece"),
    "qwen2": ("labkit", "hf", "tiktoken"),
    "bert-bge": ("labkit",),
    "cl100k_base": ("labkit", "hf", "tiktoken"),
    "botchan-unigram": ("labkit", "sentencepiece"),
    "botchan-bpe": ("labkit", "sentencepiece"),
    "minilm": ("labkit", "hf"),
}


def servable_pairs(names=BUNDLED, engines=ENGINES) -> list[tuple[str, str]]:
    """Every (name, engine) of ``names`` x ``engines`` that the engine serves, in that order
    (from :data:`SERVABLE`: no tokenizer is built)."""
    return [(name, engine) for name in names for engine in engines if engine in SERVABLE[name]]


def built_servable_pairs(names=BUNDLED, engines=ENGINES) -> list[tuple[str, str]]:
    """:func:`servable_pairs` found by building every pair (what :data:`SERVABLE` must equal)."""
    return [(name, engine) for name in names for engine in engines
            if not isinstance(_attempt(name, engine), EngineUnavailable)]


MODEL_FILES = ("botchan-unigram", "botchan-bpe")  # bundled SentencePiece .model files
READ_BY_LLAMA_CPP = ("llama-spm", "bert-bge")  # bundled llama/bert GGUFs, which the hf engine refuses


@functools.lru_cache(maxsize=None)
def compared(name: str, engine: str) -> labkit.Tokenizer:
    """``loaded(name, engine)``, except that ``"hf"`` over a ``.model`` or a llama/bert GGUF
    (which ``labkit.load`` refuses) is tokenizers' conversion asked for by name: the tests that
    pin where the libraries disagree compare exactly that."""
    if engine == "hf" and name in MODEL_FILES + READ_BY_LLAMA_CPP:
        from labkit.engines.hf import convert_model_file

        return convert_model_file(name)
    return loaded(name, engine)
