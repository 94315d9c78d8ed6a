"""Prometheus metrics for the tokenizer layer, as a serving system would export them.

Off by default, so the algorithms pay nothing for them: ``labkit.metrics.enable()`` turns
recording on, ``exposition()`` gives the text a Prometheus server would scrape. Metrics live
in their own registry (``REGISTRY``), never in prometheus_client's global one.
Introduced in notebook ``12_performance_and_metrics``.

Example: ``labkit.metrics.enable(); tok.encode("hi"); print(labkit.metrics.exposition())``
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

REGISTRY = CollectorRegistry(auto_describe=True)
ENABLED = False

_LATENCY_BUCKETS = (1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 0.5, 1.0, 5.0)
_SIZE_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
_LABELS = ("engine", "tokenizer")

ENCODE_SECONDS = Histogram("labkit_encode_duration_seconds", "Time spent in encode()", _LABELS,
                           buckets=_LATENCY_BUCKETS, registry=REGISTRY)
DECODE_SECONDS = Histogram("labkit_decode_duration_seconds", "Time spent in decode()", _LABELS,
                           buckets=_LATENCY_BUCKETS, registry=REGISTRY)
TOKENS_PER_ENCODE = Histogram("labkit_encode_tokens", "Tokens produced per encode()", _LABELS,
                              buckets=_SIZE_BUCKETS, registry=REGISTRY)
CHARS_PER_ENCODE = Histogram("labkit_encode_chars", "Characters consumed per encode()", _LABELS,
                             buckets=_SIZE_BUCKETS, registry=REGISTRY)
STREAM_STEPS = Counter("labkit_stream_steps", "DecodeStream steps", _LABELS, registry=REGISTRY)
STREAM_HOLDS = Counter("labkit_stream_incomplete_utf8_holds",
                       "Steps that held text back because it ended in an incomplete character",
                       _LABELS, registry=REGISTRY)
STOP_DETECTIONS = Counter("labkit_stop_detections", "Stops detected, by kind (token or string)",
                          (*_LABELS, "kind"), registry=REGISTRY)
CACHE_LOOKUPS = Counter("labkit_cache_lookups", "Tokenization cache lookups by level and result",
                        (*_LABELS, "level", "result"), registry=REGISTRY)
LOAD_SECONDS = Histogram("labkit_load_duration_seconds", "Time spent in labkit.load()", _LABELS,
                         buckets=_LATENCY_BUCKETS, registry=REGISTRY)
LOAD_ERRORS = Counter("labkit_load_errors", "labkit.load() calls that raised LabkitError", ("source",),
                      registry=REGISTRY)


def enable(on: bool = True) -> None:
    """Turn recording on (or off with ``enable(False)``)."""
    global ENABLED
    ENABLED = bool(on)


def exposition() -> str:
    """The Prometheus text exposition of every labkit metric."""
    return generate_latest(REGISTRY).decode("utf-8")


def _labels(tok) -> tuple[str, str]:
    return (getattr(tok, "engine", "?"), getattr(tok, "name", "?"))


def record_encode(tok, seconds: float, n_tokens: int, n_chars: int) -> None:
    engine, name = _labels(tok)
    ENCODE_SECONDS.labels(engine, name).observe(seconds)
    TOKENS_PER_ENCODE.labels(engine, name).observe(n_tokens)
    CHARS_PER_ENCODE.labels(engine, name).observe(n_chars)


def record_decode(tok, seconds: float) -> None:
    DECODE_SECONDS.labels(*_labels(tok)).observe(seconds)


def record_stream_step(tok, held: bool) -> None:
    if not ENABLED:
        return
    labels = _labels(tok)
    STREAM_STEPS.labels(*labels).inc()
    if held:
        STREAM_HOLDS.labels(*labels).inc()


def record_stop(tok, kind: str) -> None:
    if ENABLED:
        STOP_DETECTIONS.labels(*_labels(tok), kind).inc()


def record_cache_lookup(tok, level: str, hit: bool) -> None:
    if ENABLED:
        CACHE_LOOKUPS.labels(*_labels(tok), level, "hit" if hit else "miss").inc()


def record_load(tok, seconds: float) -> None:
    if ENABLED:
        LOAD_SECONDS.labels(*_labels(tok)).observe(seconds)


def record_load_error(source: str) -> None:
    if ENABLED:
        LOAD_ERRORS.labels(source).inc()
