"""The every-code-point sweep (labkit.conformance.sweep) on slices of the code space: exact on
the ranges where Unicode tables disagree, and it does report a difference when there is one."""
from __future__ import annotations

import pytest

import labkit
from labkit.conformance import sweep as sweep_module
from labkit.conformance.sweep import code_points, main, sweep


@pytest.mark.parametrize("name,reference,start,stop", [
    ("gpt2", "tiktoken", 0x0, 0x600),            # Latin, combining marks, Greek, Cyrillic, Armenian
    ("qwen2", "hf", 0x3D000, 0x3D100),          # letters only newer regex releases know
    ("cl100k_base", "tiktoken", 0x1C80, 0x1D00),
    ("botchan-unigram", "sentencepiece", 0xFF00, 0xFFF0),  # full-width forms the charsmap folds
])
def test_sweep_slices_are_exact(name, reference, start, stop):
    assert sweep(name, reference, start=start, stop=stop) == []


def test_sweep_reports_a_difference(monkeypatch):
    real_load = labkit.load

    def load(source, engine=None, **kwargs):
        tok = real_load(source, engine=engine, **kwargs)
        if engine == "labkit":
            encode = tok.encode
            monkeypatch.setattr(tok, "encode", lambda text, **kw: encode(text.replace("é", "e"), **kw))
        return tok

    monkeypatch.setattr(sweep_module.labkit, "load", load)
    assert sweep("gpt2", "tiktoken", start=0xE0, stop=0xF0) == [0xE9]


def test_command_line(capsys):
    assert main(["gpt2", "--reference", "tiktoken", "--start", "0x41", "--stop", "0x5b"]) == 0
    assert "0 code points differ" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["gpt2", "--reference", "tiktoken", "--start", "0x10", "--stop", "0x5"])
    assert list(code_points(0xDFFF, 0xE001)) == [0xE000]
