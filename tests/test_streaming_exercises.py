"""The notebook-08 exercise checkers: unanswered stubs, right answers, and wrong ones told which part."""
from __future__ import annotations

import labkit
from labkit.exercises.stream import check_detokenizer, check_split_character, check_utf8_decoder
from labkit.streaming.decode_stream import SimpleDecodeStream
from labkit.streaming.naive import PerTokenDecoder
from labkit.streaming.utf8 import Utf8StreamDecoder
from labkit.streaming.window_diff import WindowDiffDecoder


def test_unanswered_exercises_say_so(capsys):
    tok = labkit.load("qwen2")
    assert check_split_character(tok, None) is None
    assert check_utf8_decoder(...) is None
    assert check_detokenizer(None, tok) is None
    assert [line.startswith("not answered yet") for line in capsys.readouterr().out.splitlines()] == [True] * 3


def test_right_answers_pass(capsys):
    tok = labkit.load("qwen2")
    assert check_split_character(tok, tok.encode("🫨").ids)
    assert check_utf8_decoder(Utf8StreamDecoder)
    assert check_detokenizer(SimpleDecodeStream, tok)
    assert check_detokenizer(SimpleDecodeStream, labkit.load("llama-spm", engine="sentencepiece"))


def test_wrong_answers_name_the_part(capsys):
    tok = labkit.load("qwen2")
    assert not check_split_character(tok, tok.encode("hello").ids)
    assert "no character is split" in capsys.readouterr().out
    assert not check_split_character(tok, [10**9])
    assert "not a list of ids" in capsys.readouterr().out
    assert not check_detokenizer(PerTokenDecoder, tok)
    out = capsys.readouterr().out
    assert "wrong: a sentence with spaces" in out and "U+FFFD was emitted too early" in out
    assert not check_detokenizer(lambda t: WindowDiffDecoder(t, k=4, fallback=False), tok)
    out = capsys.readouterr().out
    assert "wrong: a sentence with spaces" in out and "text is missing" in out

    class ReplacesEveryCut(Utf8StreamDecoder):
        def step(self, data):
            return data.decode("utf-8", "replace") or None

    assert not check_utf8_decoder(ReplacesEveryCut)
    assert "too many U+FFFD" in capsys.readouterr().out
