"""``labkit.load``: every bundled name, OpenAI model names, engine choice and its errors.

Timings are measured and printed (run with ``-s`` to see them), never asserted: the
machine is shared and noisy.
"""
from __future__ import annotations

import time

import pytest
import sentencepiece
import tiktoken
import tokenizers

import labkit
from labkit.core import EngineUnavailable
from labkit.factory import ENGINES
from labkit.paths import BUNDLED

# which reference engines can serve each bundled file (labkit's own engines come on top)
REFERENCE_SERVES = {
    "gpt2": {"hf", "tiktoken"},
    "llama-spm": {"sentencepiece"},  # the hf engine refuses llama and bert GGUFs
    "qwen2": {"hf", "tiktoken"},
    "bert-bge": set(),
    "cl100k_base": {"hf", "tiktoken"},
    "botchan-unigram": {"sentencepiece"},  # the hf engine refuses .model files
    "botchan-bpe": {"sentencepiece"},
    "minilm": {"hf"},
}
BACKEND_TYPES = {
    "hf": tokenizers.Tokenizer,
    "tiktoken": tiktoken.Encoding,
    "sentencepiece": sentencepiece.SentencePieceProcessor,
}
# (name, text, ids): ids as the original tokenizers give them
KNOWN_IDS = [
    ("gpt2", "Hello world", [15496, 995]),
    ("qwen2", "Hello world", [9707, 1879]),
    ("cl100k_base", "Hello world", [9906, 1917]),
    ("llama-spm", "Hello world", [15043, 3186]),
    ("bert-bge", "Hello world", [7592, 2088]),
    ("minilm", "Hello world", [7592, 2088]),
]


_LOADED: dict[tuple[str, str], labkit.Tokenizer] = {}


def cached(name: str, engine: str) -> labkit.Tokenizer:
    """Load once per test session (building cl100k for tokenizers takes a second)."""
    key = (name, engine)
    if key not in _LOADED:
        _LOADED[key] = labkit.load(name, engine=engine)
    return _LOADED[key]


def test_bundled_names_are_the_ones_this_file_knows():
    assert set(BUNDLED) == set(REFERENCE_SERVES)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_every_bundled_name_loads_with_the_default_engine(name):
    started = time.perf_counter()
    tok = labkit.load(name)
    elapsed = time.perf_counter() - started
    print(f"load({name!r}) -> engine {tok.engine}: {elapsed:.3f} s")
    assert tok.engine in ENGINES
    assert tok.engine == "labkit" or tok.engine in REFERENCE_SERVES[name]
    assert tok.vocab_size == len(tok.vocab.tokens) > 900
    enc = tok.encode("Hello world")
    assert len(enc.ids) == len(enc.tokens) == len(enc.offsets) > 0
    assert tok.decode(enc.ids, skip_special_tokens=True).strip().lower() == "hello world"


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_every_reference_engine_that_can_serve_a_bundled_file_does(name):
    for engine in sorted(REFERENCE_SERVES[name]):
        started = time.perf_counter()
        tok = _LOADED[(name, engine)] = labkit.load(name, engine=engine)
        print(f"load({name!r}, engine={engine!r}): {time.perf_counter() - started:.3f} s")
        assert tok.engine == engine
        assert isinstance(tok.backend, BACKEND_TYPES[engine])


@pytest.mark.parametrize("name,text,ids", KNOWN_IDS)
def test_reference_ids_of_a_known_sentence(name, text, ids):
    for engine in sorted(REFERENCE_SERVES[name]):
        assert cached(name, engine).encode(text).ids == ids


# the small files (the message builds every engine that can serve, which is slow for cl100k/qwen2)
@pytest.mark.parametrize("name", ["gpt2", "llama-spm", "bert-bge", "botchan-unigram", "minilm"])
def test_engines_that_cannot_serve_say_which_can(name):
    # one engine that cannot serve the file (the message tries every engine, which takes a while)
    for engine in sorted({"hf", "tiktoken", "sentencepiece"} - REFERENCE_SERVES[name])[:1]:
        with pytest.raises(EngineUnavailable) as info:
            labkit.load(name, engine=engine)
        message = str(info.value)
        assert repr(engine) in message and "engines that can:" in message
        can = message.rsplit("engines that can:", 1)[1]
        for other in REFERENCE_SERVES[name]:
            assert other in can, message


@pytest.mark.parametrize(
    "model,bundled",
    [("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base"), ("text-embedding-ada-002", "cl100k_base"),
     ("davinci", "gpt2"), ("gpt-2", "gpt2")],
)
def test_openai_model_names_route_to_their_encoding(model, bundled):
    tok = labkit.load(model, engine="hf" if bundled == "gpt2" else "tiktoken")
    reference = cached(bundled, tok.engine)
    assert tok.vocab.source == reference.vocab.source
    text = "OpenAI's tokenizer: 12345 tokens!"
    assert tok.encode(text).ids == reference.encode(text).ids


def test_gpt4_is_tiktokens_own_cl100k(monkeypatch):
    # tiktoken's own cl100k_base() constructor, fed the shipped file instead of the network
    from tiktoken_ext import openai_public

    ours = cached("gpt-4", "tiktoken")
    local = str(ours.vocab.source)
    real_loader = tiktoken.load.load_tiktoken_bpe
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda url, expected_hash=None: real_loader(local, expected_hash=expected_hash))
    reference = tiktoken.Encoding(**openai_public.cl100k_base())
    for text in ["Tokenizers differ: 2024-11-22, naïve café 😀", "  spaces\n\n\tand tabs  ", "don't STOP'S"]:
        assert ours.encode(text).ids == reference.encode(text, allowed_special="all")
        assert cached("cl100k_base", "hf").encode(text).ids == reference.encode(text)
    assert ours.encode("<|endoftext|><|fim_prefix|>").ids == [100257, 100258]
    assert ours.encode("<|endoftext|>", parse_special=False).ids == reference.encode_ordinary("<|endoftext|>")


def test_unknown_engine_name():
    with pytest.raises(labkit.LabkitError, match="unknown engine 'bogus'"):
        labkit.load("gpt2", engine="bogus")


@pytest.mark.parametrize("source", ["no-such-model", "", 42, None])
def test_unknown_sources(source):
    with pytest.raises(labkit.LabkitError):
        labkit.load(source)


@pytest.mark.parametrize("engine", ["hf", "tiktoken"])
def test_unknown_ids_raise(engine):
    tok = cached("gpt2", engine)
    n = tok.vocab_size
    for bad in ([n], [-1], [0, 10**12], ["x"], [1.5j]):
        with pytest.raises(labkit.LabkitError):
            tok.decode(bad)
    with pytest.raises(labkit.LabkitError):
        tok.id_to_token(n)
    with pytest.raises(labkit.LabkitError):
        tok.encode(b"bytes are not text")


@pytest.mark.parametrize("name", ["llama-spm", "botchan-unigram", "bert-bge"])
def test_unknown_ids_raise_for_other_families(name):
    for engine in sorted(REFERENCE_SERVES[name]):
        tok = cached(name, engine)
        with pytest.raises(labkit.LabkitError, match="unknown id"):
            tok.decode([0, tok.vocab_size])


def _library_spelling(tok: labkit.Tokenizer, index: int):
    """What the library behind ``tok`` calls id ``index`` (bytes for tiktoken)."""
    if tok.engine == "hf":
        return tok.backend.id_to_token(index)
    if tok.engine == "sentencepiece":
        return tok.backend.id_to_piece(index)
    return tok.backend.decode_single_token_bytes(index)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_names_and_ids_are_the_librarys_own(name):
    from labkit.algorithms.bytes_unicode import gpt2_to_bytes

    for engine in sorted(REFERENCE_SERVES[name]):
        tok = cached(name, engine)
        for index in [*range(0, 1000, 37), tok.vocab_size - 1]:
            if tok.vocab.token_types[index] in (2, 5):
                continue  # unknown/unused pieces: the hf Unigram hides them from its lattice
            ours = tok.id_to_token(index)
            theirs = _library_spelling(tok, index)
            if engine == "tiktoken":
                ours = ours.encode() if tok.is_special_id(index) else gpt2_to_bytes(ours)
            assert ours == theirs, (engine, index)
            assert tok.token_to_id(tok.id_to_token(index)) == index
