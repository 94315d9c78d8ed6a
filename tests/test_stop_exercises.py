"""The notebook-09 exercise checkers and the stop timeline trace."""
from __future__ import annotations


import pytest

from support.engines import loaded
from labkit import LabkitError
from labkit.exercises.stop import check_jail, check_shown, check_stop_filter
from labkit.streaming.stop import StopSequenceConfig, stop_timeline


def reference_filter(chunks, stops):
    """A from-scratch jail (brute force), as a reader might write it."""
    text, shown, out = "", 0, []
    for chunk in chunks:
        text += chunk
        hits = [(text.find(s) + len(s), -len(s), s) for s in stops if s in text]
        if hits:
            end, _, stop = min(hits)
            out.append(text[shown:end - len(stop)])
            return out
        keep = next((k for k in range(len(text), 0, -1)
                     if any(len(s) > k and s.startswith(text[-k:]) for s in stops)), 0)
        out.append(text[shown:len(text) - keep])
        shown = len(text) - keep
    out.append(text[shown:])
    return out


def test_check_jail(capsys):
    assert check_jail("Say Hello", ["Hello world"], "Hello")
    assert not check_jail("Say Hello", ["Hello world"], "")
    assert not check_jail("Say Hello world", ["Hello world"], "")  # already stopped
    assert "stopped" in capsys.readouterr().out
    with pytest.raises(LabkitError):
        check_jail("x", ["x y"], 5)


def test_unanswered_exercises_say_so(capsys):
    assert check_jail("x", ["x y"], None) is None
    assert check_shown("x", ..., hidden=["y"]) is None
    assert check_stop_filter(None) is None
    assert [line.startswith("not answered yet") for line in capsys.readouterr().out.splitlines()] == [True] * 3


def test_a_wrong_filter_is_told_which_chunk(capsys):
    assert not check_stop_filter(lambda chunks, stops: list(chunks) + [""])
    assert "after chunk 0 you showed 'Hello'" in capsys.readouterr().out


def test_check_shown():
    assert check_shown("xabcde", "xa", hidden=["bc"], visible=["abcd"])
    assert not check_shown("xabcde", "xabcd", hidden=["bc"], visible=["abcd"])
    assert check_shown("no stop", "no stop", hidden=["zz"])


def test_check_stop_filter_accepts_a_right_jail_and_rejects_wrong_ones():
    assert check_stop_filter(reference_filter)
    assert not check_stop_filter(lambda chunks, stops: list(chunks) + [""])  # approach A: leaks
    assert not check_stop_filter(lambda chunks, stops: [""] * len(chunks) + ["".join(chunks)])  # holds all
    assert not check_stop_filter(lambda chunks, stops: 1 / 0)


def test_stop_timeline_rows():
    tok = loaded("gpt2", "hf")
    rows = stop_timeline(tok, StopSequenceConfig(stop_sequences=["Hello world"]), tok.encode("Say Hello test").ids)
    assert [(r["output"], r["shown"], r["jail"]) for r in rows] == [
        ("Text", "Say", ""), ("Text", " ", "Hello"), ("Text", "Hello test", ""), ("Text", "", ""),
    ]
    assert rows[-1]["step"] == "flush"
    eos = tok.special_tokens.eos_id
    rows = stop_timeline(tok, StopSequenceConfig(stop_tokens=[eos]), [*tok.encode("Hi").ids, eos, 11])
    assert [r["decoded"] for r in rows] == ["Hi", "-", "-"]  # a hidden stop token is never decoded
    assert [r["output"] for r in rows] == ["Text", "Stopped", "Stopped"]
