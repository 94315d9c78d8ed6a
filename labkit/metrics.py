"""Prometheus metrics for the tokenizer layer (placeholder hooks; filled in by issue 10)."""
from __future__ import annotations


def record_load(tok, seconds: float) -> None:
    """Count a successful load."""


def record_load_error(source: str) -> None:
    """Count a failed load."""
