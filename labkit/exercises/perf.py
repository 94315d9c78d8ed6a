"""Checkers for the "Try it" exercises of notebooks 12 (performance) and 15 (serving metrics).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint, and returns True/False.
Introduced in notebooks ``12_performance`` and ``15_serving_metrics``.

Example:
    >>> from labkit.exercises.perf import check_percentile
    >>> check_percentile([1.0, 2.0, 3.0, 4.0], 50, 2.5)
    right
    True
"""
from __future__ import annotations

import math
import statistics
from typing import Mapping, Sequence

from labkit.algorithms.bpe import bpe_heap, bpe_naive, byte_parts, pair_ranker
from labkit.core import LabkitError
from labkit.exercises import answerable, spelling, verdict as _verdict


def percentile(samples: Sequence[float], q: int) -> float:
    """The ``q``-th percentile of ``samples`` by linear interpolation between order statistics
    (``statistics.quantiles(..., method="inclusive")``, numpy's default).

    Example:
        >>> from labkit.exercises.perf import percentile
        >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
        2.5
    """
    values = [float(v) for v in samples]
    if len(values) < 2:
        raise LabkitError(f"percentile: need at least 2 samples, got {len(values)}")
    if not (isinstance(q, int) and 1 <= q <= 99):
        raise LabkitError(f"percentile: q must be an int from 1 to 99, got {q!r}")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


@answerable
def check_percentile(samples: Sequence[float], q: int, answer: float) -> bool:
    """Is ``answer`` the ``q``-th percentile of ``samples`` (interpolated, as numpy does)?

    Example:
        >>> from labkit.exercises.perf import check_percentile
        >>> check_percentile([1.0, 2.0, 3.0, 4.0], 50, 2.5)
        right
        True
    """
    right = percentile(samples, q)
    return _verdict(math.isclose(float(answer), right, rel_tol=1e-9, abs_tol=1e-12),
                    "sort the samples; the percentile sits at position (n - 1) * q / 100, "
                    "interpolated between the two neighbours")


def rank_calls(word: bytes, ranks: Mapping[tuple[bytes, bytes], int]) -> tuple[int, int]:
    """How many times naive BPE and heap BPE call the rank function on ``word``: (naive, heap).

    Example:
        >>> from labkit.exercises.perf import rank_calls
        >>> rank_calls(b"aaaa", {(b"a", b"a"): 0, (b"aa", b"aa"): 1})
        (6, 5)
    """
    counts = {"naive": 0, "heap": 0}
    rank = pair_ranker(ranks)

    def counting(kind):
        def call(a, b):
            counts[kind] += 1
            return rank(a, b)
        return call

    parts = byte_parts(bytes(word))
    if bpe_naive(parts, counting("naive")) != bpe_heap(parts, counting("heap")):
        raise LabkitError("rank_calls: naive and heap BPE disagree (a bug in labkit)")
    return counts["naive"], counts["heap"]


@answerable
def check_rank_calls(word: bytes, ranks: Mapping[tuple[bytes, bytes], int], naive_calls: int, heap_calls: int) -> bool:
    """Are these the numbers of rank lookups naive and heap BPE make on ``word``?

    Example:
        >>> from labkit.exercises.perf import check_rank_calls
        >>> check_rank_calls(b"aaaa", {(b"a", b"a"): 0, (b"aa", b"aa"): 1}, 6, 5)
        right
        True
    """
    naive, heap = rank_calls(word, ranks)
    hints = []
    if naive_calls != naive:
        hints.append("naive: every step looks at every adjacent pair, including the last step that finds none")
    if heap_calls != heap:
        hints.append("heap: one lookup per initial pair, then one per new neighbour of each merged part")
    return _verdict(not hints, "; ".join(hints))


# the stage of labkit's encode that runs outside the GIL: the `regex` module releases it while
# matching an immutable str (its documented behaviour); the merge loop and id lookups are bytecode
GIL_FREE_STAGE = "regex split"
GIL_STAGES = ("regex split", "merge loop", "id lookup")
_STAGE_SPELLINGS = {spelling(s): s for s in GIL_STAGES} | {
    spelling(s): "regex split" for s in ("regex", "split", "pre-tokenizer", "pretokenizer", "pre-tokenization")}


@answerable
def check_gil_stage(counter_moves: bool, stage: str) -> bool:
    """Does another thread run during labkit's encode (``counter_moves``), and which stage of
    the encode lets it (one of ``GIL_STAGES``)? Each part is judged on its own.

    Example:
        >>> from labkit.exercises.perf import check_gil_stage
        >>> check_gil_stage(True, "merge loop")
        wrong: stage: the merge loop is Python bytecode and holds the GIL while it runs; which stage calls into a C extension?
        False
    """
    hints = []
    if counter_moves is not True:
        hints.append("counter: clear the word cache and run it a few times; it moves a little, not never")
    named = _STAGE_SPELLINGS.get(spelling(stage))
    if named is None:
        hints.append(f"stage: answer one of {', '.join(GIL_STAGES)}")
    elif named == "merge loop":
        hints.append("stage: the merge loop is Python bytecode and holds the GIL while it runs; "
                     "which stage calls into a C extension?")
    elif named != GIL_FREE_STAGE:
        hints.append("stage: an id lookup is one dict access in bytecode, too short to let go of the GIL")
    return _verdict(not hints, "; ".join(hints))
