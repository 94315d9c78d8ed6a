"""Byte-fallback runs longer than MAX_RUN_BYTES (issue 14) on decoders that render a run all or
nothing (tokenizers' reading of llama-spm, asked for by name: engine="hf" refuses the file): the window stays bounded, the stream is exact on valid
runs and on runs already invalid, and the one pinned difference from ``decode(all)`` is a valid
run past the bound that turns invalid later. labkit's engine decodes a GGUF as llama.cpp does
(one U+FFFD per bad sequence, as Python reads its bytes), which no later byte changes."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.streaming.decode_stream import MAX_RUN_BYTES, DecodeStream, run_sensitive_byte_ids
from labkit.streaming.utf8 import byte_token_ids

from support.engines import compared as tokenizer  # hf over llama-spm: tokenizers' reading, which engine="hf" refuses to serve

RUN_SENSITIVE = [("llama-spm", "hf")]


def stream_all(tok, ids, prompt=()):
    stream = DecodeStream(tok, list(prompt))
    out = "".join(stream.step_batch(ids)) + (stream.flush() or "")
    return out, stream.max_window


@pytest.mark.parametrize("name,engine", RUN_SENSITIVE)
def test_these_decoders_are_run_sensitive(name, engine):
    assert len(run_sensitive_byte_ids(tokenizer(name, engine))) == 256


def test_llama_cpps_decoding_is_not_run_sensitive_and_streams_exactly():
    tok = tokenizer("llama-spm", "labkit")
    assert run_sensitive_byte_ids(tok) == set()
    byte = byte_token_ids(tok)
    ids = [byte[b] for b in ("é" * 35).encode() + b"\x80"]  # past the bound, then a bad byte
    out, window = stream_all(tok, ids)
    assert out == tok.decode(ids) == "é" * 35 + "\ufffd" and window <= MAX_RUN_BYTES + 4


@pytest.mark.parametrize("name,engine", RUN_SENSITIVE)
def test_the_pinned_difference_a_long_valid_run_that_turns_invalid(name, engine):
    tok = tokenizer(name, engine)
    byte = byte_token_ids(tok)
    ids = [byte[b] for b in ("é" * 35).encode() + b"\x80"]  # 70 valid bytes, then one that is not
    assert len(ids) - 1 > MAX_RUN_BYTES
    out, window = stream_all(tok, ids)
    whole = tok.decode(ids)
    assert whole == "\ufffd" * 71  # the decoder: one U+FFFD per byte of the invalid run
    assert out != whole
    shown = len(out) - len(out[len(out.rstrip("\ufffd")):])  # the characters before the U+FFFD tail
    assert out[:shown] == "é" * shown and shown >= MAX_RUN_BYTES // 2 - 1
    assert set(out[shown:]) == {"\ufffd"}
    assert window <= MAX_RUN_BYTES + 4


@pytest.mark.parametrize("name,engine", RUN_SENSITIVE)
def test_an_invalid_byte_within_the_bound_is_still_exact(name, engine):
    tok = tokenizer(name, engine)
    byte = byte_token_ids(tok)
    ids = [byte[b] for b in ("é" * 31).encode() + b"\x80"]  # 63 bytes: held whole
    assert stream_all(tok, ids)[0] == tok.decode(ids) == "\ufffd" * 63


@pytest.mark.parametrize("name,engine", RUN_SENSITIVE)
@settings(max_examples=25, deadline=None, derandomize=True)
@given(text=st.text(alphabet="aé中🫨 \n—", min_size=40, max_size=200),
       junk=st.binary(min_size=1, max_size=6), lead=st.sampled_from(["", "Hello", " the"]))
def test_valid_runs_and_runs_invalid_from_the_start_are_exact(name, engine, text, junk, lead):
    tok = tokenizer(name, engine)
    byte = byte_token_ids(tok)
    prompt = tok.encode(lead, parse_special=False).ids if lead else []
    valid = [byte[b] for b in text.encode()]
    invalid_first = [byte[0x80]] + [byte[b] for b in junk + text.encode()]  # an orphan byte opens the run
    for ids in (valid, invalid_first):
        out, window = stream_all(tok, ids, prompt)
        assert out == tok.decode(prompt + ids)[len(tok.decode(prompt)):]
        assert window <= MAX_RUN_BYTES + 12
