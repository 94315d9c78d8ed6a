"""Prometheus metrics for the tokenizer layer, as a serving system would export them.

Off by default, so the algorithms pay nothing for them (and prometheus_client is imported only
when metrics are first enabled or read, which keeps ``import labkit`` fast): ``labkit.metrics.enable()`` turns
recording on, ``exposition()`` gives the text a Prometheus server would scrape. Metrics live
in their own registry (``REGISTRY``), never in prometheus_client's global one.
Introduced in notebook ``15_serving_metrics``.

Example:
    >>> import labkit
    >>> import labkit.metrics
    >>> labkit.metrics.enable()
    >>> _ = labkit.load("gpt2", engine="labkit").encode("hi")
    >>> "labkit_encode" in labkit.metrics.exposition()
    True
    >>> labkit.metrics.enable(False)
"""
from __future__ import annotations

import types

ENABLED = False

_LATENCY_BUCKETS = (1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 0.5, 1.0, 5.0)
_SIZE_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
_LABELS = ("engine", "tokenizer")
_INSTRUMENTS: types.SimpleNamespace | None = None


def _instruments() -> types.SimpleNamespace:
    """The registry and its counters/histograms, made on first use: importing
    prometheus_client costs more than the rest of ``import labkit``, so it waits until asked."""
    global _INSTRUMENTS
    if _INSTRUMENTS is not None:
        return _INSTRUMENTS
    from prometheus_client import CollectorRegistry, Counter, Histogram

    registry = CollectorRegistry(auto_describe=True)

    def histogram(name, doc, buckets, labels=_LABELS):
        return Histogram(name, doc, labels, buckets=buckets, registry=registry)

    def counter(name, doc, labels=_LABELS):
        return Counter(name, doc, labels, registry=registry)

    _INSTRUMENTS = types.SimpleNamespace(
        REGISTRY=registry,
        ENCODE_SECONDS=histogram("labkit_encode_duration_seconds", "Time spent in encode()", _LATENCY_BUCKETS),
        DECODE_SECONDS=histogram("labkit_decode_duration_seconds", "Time spent in decode()", _LATENCY_BUCKETS),
        TOKENS_PER_ENCODE=histogram("labkit_encode_tokens", "Tokens produced per encode()", _SIZE_BUCKETS),
        CHARS_PER_ENCODE=histogram("labkit_encode_chars", "Characters consumed per encode()", _SIZE_BUCKETS),
        STREAM_STEPS=counter("labkit_stream_steps", "DecodeStream steps"),
        STREAM_HOLDS=counter("labkit_stream_incomplete_utf8_holds",
                             "Steps that held text back because it ended in an incomplete character"),
        STOP_DETECTIONS=counter("labkit_stop_detections", "Stops detected, by kind (token or string)",
                                (*_LABELS, "kind")),
        CACHE_LOOKUPS=counter("labkit_cache_lookups", "Tokenization cache lookups by level and result",
                              (*_LABELS, "level", "result")),
        LOAD_SECONDS=histogram("labkit_load_duration_seconds", "Time spent in labkit.load()", _LATENCY_BUCKETS),
        LOAD_ERRORS=counter("labkit_load_errors", "labkit.load() calls that raised LabkitError", ("source",)),
    )
    return _INSTRUMENTS


def __getattr__(name: str):
    """``labkit.metrics.REGISTRY``, ``ENCODE_SECONDS``, ...: made on first access."""
    if name.isupper() and not name.startswith("_"):
        instruments = _instruments()
        if hasattr(instruments, name):
            return getattr(instruments, name)
    raise AttributeError(f"module 'labkit.metrics' has no attribute {name!r}")


def enable(on: bool = True) -> None:
    """Turn recording on (or off with ``enable(False)``)."""
    global ENABLED
    if on:
        _instruments()
    ENABLED = bool(on)


def exposition() -> str:
    """The Prometheus text exposition of every labkit metric."""
    from prometheus_client import generate_latest

    return generate_latest(_instruments().REGISTRY).decode("utf-8")


def _labels(tok) -> tuple[str, str]:
    return (getattr(tok, "engine", "?"), getattr(tok, "name", "?"))


def record_encode(tok, seconds: float, n_tokens: int, n_chars: int) -> None:
    engine, name = _labels(tok)
    _instruments().ENCODE_SECONDS.labels(engine, name).observe(seconds)
    _instruments().TOKENS_PER_ENCODE.labels(engine, name).observe(n_tokens)
    _instruments().CHARS_PER_ENCODE.labels(engine, name).observe(n_chars)


def record_decode(tok, seconds: float) -> None:
    _instruments().DECODE_SECONDS.labels(*_labels(tok)).observe(seconds)


def record_stream_step(tok, held: bool) -> None:
    if not ENABLED:
        return
    labels = _labels(tok)
    _instruments().STREAM_STEPS.labels(*labels).inc()
    if held:
        _instruments().STREAM_HOLDS.labels(*labels).inc()


def record_stop(tok, kind: str) -> None:
    if ENABLED:
        _instruments().STOP_DETECTIONS.labels(*_labels(tok), kind).inc()


def record_cache_lookup(tok, level: str, hit: bool) -> None:
    if ENABLED:
        _instruments().CACHE_LOOKUPS.labels(*_labels(tok), level, "hit" if hit else "miss").inc()


def record_load(tok, seconds: float) -> None:
    if ENABLED:
        _instruments().LOAD_SECONDS.labels(*_labels(tok)).observe(seconds)


def record_load_error(source: str) -> None:
    if ENABLED:
        _instruments().LOAD_ERRORS.labels(source).inc()
