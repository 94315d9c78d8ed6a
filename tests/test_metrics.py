"""Metrics: off by default (nothing recorded), on when enabled, exposed as Prometheus text."""
from __future__ import annotations

import re

import pytest

import labkit
from labkit import metrics
from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer


def _sample(text: str, name: str, **labels) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            if all(f'{k}="{v}"' in line for k, v in labels.items()):
                total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.fixture
def recording():
    metrics.enable()
    yield
    metrics.enable(False)


def test_nothing_is_recorded_while_disabled():
    tok = labkit.load("gpt2", engine="hf")
    before = _sample(metrics.exposition(), "labkit_encode_duration_seconds_count", engine="hf")
    tok.encode("hello world")
    assert _sample(metrics.exposition(), "labkit_encode_duration_seconds_count", engine="hf") == before


def test_encode_decode_load_and_cache_are_recorded(recording):
    tok = labkit.load("gpt2", engine="hf")
    name = tok.name
    text = metrics.exposition()
    encodes = _sample(text, "labkit_encode_duration_seconds_count", tokenizer=name)
    tok.encode("hello world")
    tok.decode([31373, 995])
    cached = CachedTokenizer(tok, CacheConfig(enable_l0=True))
    cached.encode("abc")
    cached.encode("abc")
    text = metrics.exposition()
    assert _sample(text, "labkit_encode_duration_seconds_count", tokenizer=name) >= encodes + 1
    assert _sample(text, "labkit_encode_tokens_sum", tokenizer=name) >= 2
    assert _sample(text, "labkit_decode_duration_seconds_count", tokenizer=name) >= 1
    assert _sample(text, "labkit_cache_lookups_total", level="l0", result="hit") >= 1
    assert _sample(text, "labkit_cache_lookups_total", level="l0", result="miss") >= 1
    assert _sample(text, "labkit_load_duration_seconds_count", engine="hf") >= 1
    with pytest.raises(labkit.LabkitError):
        labkit.load("no-such-name")
    assert _sample(metrics.exposition(), "labkit_load_errors_total", source="no-such-name") == 1
    assert re.search(r"^# TYPE labkit_encode_duration_seconds histogram$", text, re.M)


def test_stream_steps_holds_and_stops_are_recorded(recording):
    tok = labkit.load("gpt2", engine="hf")
    name = tok.name

    def counts():
        text = metrics.exposition()
        return (_sample(text, "labkit_stream_steps_total", tokenizer=name),
                _sample(text, "labkit_stream_incomplete_utf8_holds_total", tokenizer=name),
                _sample(text, "labkit_stop_detections_total", tokenizer=name, kind="token"),
                _sample(text, "labkit_stop_detections_total", tokenizer=name, kind="string"))

    steps, holds, token_stops, string_stops = counts()
    # "é" is one GPT-2 token per byte in byte-level pieces: "\u00e9" alone is bytes C3 A9
    ids = [tok.token_to_id("Ã"), tok.token_to_id("©")]
    stream = labkit.DecodeStream(tok)
    assert [stream.step(i) for i in ids] == [None, "é"]
    after = counts()
    assert after[0] == steps + 2
    assert after[1] == holds + 1

    eos = tok.token_to_id("<|endoftext|>")
    dec = labkit.StopSequenceDecoder(tok, labkit.StopSequenceConfig(stop_tokens=(eos,)))
    dec.process_tokens(tok.encode("Hello").ids + [eos])
    assert counts()[2] == token_stops + 1
    dec = labkit.StopSequenceDecoder(tok, labkit.StopSequenceConfig(stop_sequences=("world",)))
    dec.process_tokens(tok.encode("Hello world, again").ids)
    assert dec.stopped
    assert counts()[3] == string_stops + 1


def test_stream_and_stop_record_nothing_while_disabled():
    tok = labkit.load("gpt2", engine="hf")
    before = metrics.exposition()
    stream = labkit.DecodeStream(tok)
    stream.step_batch(tok.encode("Hello world").ids)
    dec = labkit.StopSequenceDecoder(tok, labkit.StopSequenceConfig(stop_sequences=("world",)))
    dec.process_tokens(tok.encode("Hello world").ids)
    assert metrics.exposition() == before
