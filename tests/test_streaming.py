"""DecodeStream, Sequence and the fixed window-diff keep the streaming promise on every vocab and engine.

For any id sequence (random ids, text, characters split into single-byte tokens, invalid
UTF-8, special tokens), after any prompt: the chunks plus flush equal
``decode(prompt + ids)[len(decode(prompt)):]``, no chunk holds a U+FFFD the full decode does
not have at that place, and the window each step decodes does not grow with the length.
"""
from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from support.engines import servable_pairs, tokenizer
from labkit.core import TOKEN_CONTROL, LabkitError
from labkit.streaming.decode_stream import MAX_HELD, DecodeStream, run_sensitive_byte_ids
from labkit.streaming.utf8 import byte_token_ids
from labkit.streaming.window_diff import WindowDiffDecoder

NAMES = ("gpt2", "llama-spm", "qwen2", "bert-bge", "cl100k_base", "botchan-unigram", "botchan-bpe", "minilm")
ENGINES = ("labkit", "hf", "tiktoken", "sentencepiece")
PAIRS = servable_pairs(NAMES, ENGINES)
# characters that take 2, 3 and 4 bytes in UTF-8, plus ASCII, spaces and newlines
ALPHABET = "ab Z.,'\n\t  éü—中文🫨😀€ß"
MULTIBYTE = "éü—中文🫨😀€ß"
PROFILE = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)



@functools.lru_cache(maxsize=None)
def facts(name: str, engine: str):
    """Byte-token map and special ids of a tokenizer (for the id strategies)."""
    tok = tokenizer(name, engine)
    byte_ids = byte_token_ids(tok)
    specials = sorted({a.id for a in tok.vocab.added_tokens} | {
        i for i, kind in enumerate(tok.vocab.token_types) if kind == TOKEN_CONTROL
    })[:64]
    return byte_ids, specials


@functools.lru_cache(maxsize=None)  # one strategy per argument set: hypothesis redoes its setup for every new one
def id_sequences(name: str, engine: str, max_segments: int = 8):
    tok = tokenizer(name, engine)
    byte_ids, specials = facts(name, engine)
    size = tok.vocab_size
    segments = [
        st.lists(st.integers(0, size - 1), min_size=1, max_size=6),  # random ids
        st.text(alphabet=ALPHABET, max_size=12).map(lambda s: list(tok.encode(s, parse_special=False).ids)),
    ]
    if len(byte_ids) == 256:
        # characters split over single-byte tokens, and bytes that are not UTF-8 at all
        segments.append(st.text(alphabet=MULTIBYTE, min_size=1, max_size=3).map(lambda s: [byte_ids[b] for b in s.encode()]))
        segments.append(st.binary(min_size=1, max_size=8).map(lambda data: [byte_ids[b] for b in data]))
    if specials:
        segments.append(st.lists(st.sampled_from(specials), min_size=1, max_size=4))
    return st.lists(st.one_of(segments), max_size=max_segments).map(lambda parts: [i for p in parts for i in p])


def run(stream, ids):
    chunks = [stream.step(i) for i in ids]
    chunks.append(stream.flush())
    return [c for c in chunks if c is not None]


def check_promise(tok, make, prompt, ids, skip):
    """Assert the streaming promise for one stream built by ``make``."""
    full = tok.decode(prompt + ids, skip_special_tokens=skip)
    start = len(tok.decode(prompt, skip_special_tokens=skip))
    chunks = run(make(tok, prompt, skip), ids)
    assert "".join(chunks) == full[start:]
    at = start
    for chunk in chunks:
        assert chunk, "an empty chunk is reported as None"
        for offset, char in enumerate(chunk):
            if char == "\ufffd":
                assert full[at + offset] == "\ufffd", f"U+FFFD at {at + offset} that decode(all) does not have"
        at += len(chunk)


def decode_stream(tok, prompt, skip):
    return DecodeStream(tok, prompt, skip_special_tokens=skip)


def fixed_window_diff(tok, prompt, skip):
    return WindowDiffDecoder(tok, prompt, skip, k=4, fallback=True)


@pytest.mark.parametrize("name,engine", PAIRS)
def test_decode_stream_promise(name, engine):
    tok = tokenizer(name, engine)

    @PROFILE
    @given(st.data())
    def prop(data):
        prompt = data.draw(id_sequences(name, engine, max_segments=3), label="prompt")
        ids = data.draw(id_sequences(name, engine), label="ids")
        skip = data.draw(st.booleans(), label="skip_special_tokens")
        check_promise(tok, decode_stream, prompt, ids, skip)

    prop()


@pytest.mark.parametrize("name,engine", PAIRS)
def test_fixed_window_diff_promise(name, engine):
    tok = tokenizer(name, engine)

    @settings(PROFILE, max_examples=20)
    @given(st.data())
    def prop(data):
        prompt = data.draw(id_sequences(name, engine, max_segments=3), label="prompt")
        ids = data.draw(id_sequences(name, engine), label="ids")
        skip = data.draw(st.booleans(), label="skip_special_tokens")
        check_promise(tok, fixed_window_diff, prompt, ids, skip)

    prop()


@pytest.mark.parametrize("name,engine", PAIRS)
def test_sequence_text_is_decode_of_its_ids(name, engine):
    tok = tokenizer(name, engine)

    @settings(PROFILE, max_examples=20)
    @given(st.text(alphabet=ALPHABET, max_size=20), st.data())
    def prop(prompt_text, data):
        ids = data.draw(id_sequences(name, engine), label="ids")
        seq = labkit.Sequence(tok)
        prompt = seq.append_text(prompt_text, parse_special=False)
        assert seq.text() == tok.decode(prompt)
        start = len(seq.text())
        pieces = []
        for i in ids:
            piece = seq.append_token(i)
            assert isinstance(piece, str)
            pieces.append(piece)
            full = tok.decode(seq.token_ids)
            assert seq.text() == full
            # what append_token returned so far is exactly the text added since the prompt,
            # up to what is still held (an unfinished character)
            assert full[start:].startswith("".join(pieces))
        assert seq.token_ids == prompt + ids

    prop()


def longest_byte_run(ids, byte_ids):
    best = run = 0
    for i in ids:
        run = run + 1 if i in byte_ids else 0
        best = max(best, run)
    return best


@pytest.mark.parametrize("name,engine", PAIRS)
def test_work_per_step_does_not_grow(name, engine):
    """A chunk of ids repeated 40 times: no decode ever reads more than a fixed window."""
    tok = tokenizer(name, engine)
    run_ids = run_sensitive_byte_ids(tok)

    byte_ids, specials = facts(name, engine)
    # chunks that keep a naive stream holding forever when repeated: orphan bytes, specials
    stuck = [st.lists(st.sampled_from(specials), min_size=1, max_size=3)] if specials else []
    if len(byte_ids) == 256:
        stuck.append(st.binary(min_size=1, max_size=4).map(lambda data: [byte_ids[b] for b in data]))

    @settings(PROFILE, max_examples=10)
    @given(st.data())
    def prop(data):
        chunk = data.draw(st.one_of(id_sequences(name, engine, max_segments=4).filter(bool), *stuck), label="chunk")
        skip = data.draw(st.booleans(), label="skip_special_tokens")
        ids = chunk * 40
        # only a decoder that re-renders whole <0xNN> runs must see a whole run at once
        bound = 2 * MAX_HELD + 8 + longest_byte_run(ids, run_ids)
        for make in (decode_stream, fixed_window_diff):
            stream = make(tok, [], skip)
            stream.max_window = 0
            for i in ids:
                stream.step(i)
            assert stream.max_window <= bound, (make.__name__, stream.max_window, bound)

    prop()


@pytest.mark.parametrize("name,engine", [("qwen2", "hf"), ("llama-spm", "sentencepiece"), ("gpt2", "tiktoken")])
def test_long_runs_of_replacement_and_silent_ids_stay_bounded(name, engine):
    """20,000 orphan continuation bytes, or 20,000 skipped specials: the window stays small."""
    tok = tokenizer(name, engine)
    byte_ids, specials = facts(name, engine)
    for ids, skip in (([byte_ids[0x80]] * 20_000, False), ([specials[0]] * 20_000 + [byte_ids[0x41]], True)):
        stream = DecodeStream(tok, skip_special_tokens=skip)
        out = "".join(stream.step_batch(ids)) + (stream.flush() or "")
        assert out == tok.decode(ids, skip_special_tokens=skip)
        assert stream.max_window <= 2 * MAX_HELD + 8


@pytest.mark.parametrize("name,engine", [("gpt2", "hf"), ("qwen2", "tiktoken"), ("cl100k_base", "labkit")])
def test_fast_path_gives_the_same_chunks_as_the_window(name, engine):
    """The concatenative fast path is an optimisation only: chunks equal the plain algorithm's."""
    tok = tokenizer(name, engine)

    @settings(PROFILE, max_examples=30)
    @given(st.data())
    def prop(data):
        prompt = data.draw(id_sequences(name, engine, max_segments=2), label="prompt")
        ids = data.draw(id_sequences(name, engine), label="ids")
        fast = DecodeStream(tok, prompt)
        plain = DecodeStream(tok, prompt)
        plain._concat = False
        assert fast._concat
        assert [fast.step(i) for i in ids] + [fast.flush()] == [plain.step(i) for i in ids] + [plain.flush()]

    prop()


def test_bad_input_raises_labkit_error():
    tok = tokenizer("gpt2", "hf")
    stream = DecodeStream(tok)
    for bad in (-1, tok.vocab_size, "7", 1.5, None, True):
        with pytest.raises(LabkitError):
            stream.step(bad)
    with pytest.raises(LabkitError):
        DecodeStream(tok, prompt_ids="hello")
    with pytest.raises(LabkitError):
        DecodeStream(object())
    with pytest.raises(LabkitError):
        stream.step_batch("abc")
    assert stream.step(15496) == "Hello"  # the stream still works after rejected ids
    seq = labkit.Sequence(tok)
    with pytest.raises(LabkitError):
        seq.append_text(b"bytes")
    with pytest.raises(LabkitError):
        seq.append_token(-5)
    assert seq.token_ids == []
