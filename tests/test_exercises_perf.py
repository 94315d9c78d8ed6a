"""Checkers of notebooks 12 and 15: percentiles against numpy, rank-call counts against hand counts."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import labkit
from labkit.exercises.perf import check_percentile, check_rank_calls, percentile, rank_calls


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=50), st.integers(1, 99))
def test_percentile_is_numpy_linear(samples, q):
    assert percentile(samples, q) == pytest.approx(float(np.percentile(samples, q)), rel=1e-9, abs=1e-6)


def test_percentile_rejects_bad_input():
    with pytest.raises(labkit.LabkitError):
        percentile([1.0], 50)
    with pytest.raises(labkit.LabkitError):
        percentile([1.0, 2.0], 100)


def test_rank_calls_hand_counted():
    # naive: 3 pairs, then 2, then 1 (merging aa+a never ranks); heap: 3 initial, then 1 + 1
    assert rank_calls(b"aaaa", {(b"a", b"a"): 0, (b"aa", b"aa"): 1}) == (6, 5)
    # nothing merges: both look at each of the n - 1 pairs once
    assert rank_calls(b"abcdef", {}) == (5, 5)
    # "ab" x 4: naive scans 7, 6, 5, 4 pairs for the four "ab" merges, 3 and 2 for the two
    # "abab" merges, 1 for the last merge; the loop stops when one part is left
    ranks = {(b"a", b"b"): 0, (b"ab", b"ab"): 1, (b"abab", b"abab"): 2}
    naive, heap = rank_calls(b"abababab", ranks)
    assert naive == 7 + 6 + 5 + 4 + 3 + 2 + 1
    assert heap < naive


def test_checkers_say_right_and_wrong(capsys):
    assert check_percentile([1.0, 2.0, 3.0, 4.0], 50, 2.5)
    assert not check_percentile([1.0, 2.0, 3.0, 4.0], 50, 2.0)
    assert check_rank_calls(b"aaaa", {(b"a", b"a"): 0, (b"aa", b"aa"): 1}, 6, 5)
    assert not check_rank_calls(b"aaaa", {(b"a", b"a"): 0, (b"aa", b"aa"): 1}, 6, 6)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "right" and out[1].startswith("wrong") and out[2] == "right" and out[3].startswith("wrong: heap")


def test_gil_stage_checker_judges_each_part(capsys):
    from labkit.exercises.perf import check_gil_stage

    assert check_gil_stage(True, "regex split") and check_gil_stage(True, "Pre-tokenizer")
    assert not check_gil_stage(False, "regex split")
    assert not check_gil_stage(True, "merge loop")
    assert not check_gil_stage(True, "the tokenizer")
    assert check_gil_stage(..., "regex") is None
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["right", "right"]
    assert out[2].startswith("wrong: counter") and "stage" not in out[2]
    assert out[3].startswith("wrong: stage: the merge loop")
    assert out[4].startswith("wrong: stage: answer one of")
    assert out[5].startswith("not answered yet")

