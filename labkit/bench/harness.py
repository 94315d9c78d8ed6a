"""Timing helpers shared by the benchmark suites: medians over repeats, MB/s, the corpus.

Example: ``median_seconds(lambda: tok.encode(text), repeat=5)``
"""
from __future__ import annotations

import gc
import statistics
import time
from typing import Callable

from labkit.paths import data_path


def corpus(megabytes: float = 1.0) -> str:
    """botchan.txt repeated to about ``megabytes`` MB of UTF-8."""
    text = data_path("corpus/botchan.txt").read_text(encoding="utf-8")
    size = len(text.encode("utf-8"))
    copies = max(1, round(megabytes * 1_000_000 / size))
    return text * copies


def corpus_lines() -> list[str]:
    """botchan.txt's non-empty lines."""
    return [l for l in data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n") if l.strip()]


def median_seconds(fn: Callable[[], object], repeat: int = 5, warmup: int = 0) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs (after ``warmup`` untimed runs)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def table(rows: list[dict], columns: list[str]) -> str:
    """A plain-text table for terminal output."""
    widths = {c: max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines += ["  ".join(_fmt(r.get(c)).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return "" if value is None else str(value)
