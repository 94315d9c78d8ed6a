"""``python -m labkit.conformance`` prints the matrix totals and fails on a silent difference."""
from __future__ import annotations

import re

import labkit.conformance.__main__ as conformance_main
from labkit.conformance.gguf_pretypes import gguf_cases
from labkit.conformance.runner import Cell, MatrixResult


def test_prints_totals_and_counts_by_family_engine_and_status(capsys):
    assert conformance_main.main(["--families", "gguf", "--engines", "labkit,tiktoken", "--botchan", "1"]) == 0
    out = capsys.readouterr().out
    rows = len(gguf_cases())  # one per canonical pre type labkit lists
    assert re.search(rf"^configurations +{rows}$", out, re.M) and re.search(r"^differs +0$", out, re.M), out
    assert re.search(rf"gguf +labkit +exact +{rows}$", out, re.M), out
    assert re.search(r"gguf +tiktoken +refused +\d+$", out, re.M), out


def test_a_difference_is_printed_and_fails(monkeypatch, capsys):
    real = conformance_main.run_matrix

    def with_one_difference(*args, **kwargs):
        result = real(*args, **kwargs)
        first = result.cells[0]
        result.cells[0] = Cell(**{**first.__dict__, "status": "differs", "message": "ids: [1] != reference [2]"})
        return result

    monkeypatch.setattr(conformance_main, "run_matrix", with_one_difference)
    assert conformance_main.main(["--families", "gguf", "--engines", "labkit", "--botchan", "1"]) == 1
    assert "differs: gguf/" in capsys.readouterr().out
