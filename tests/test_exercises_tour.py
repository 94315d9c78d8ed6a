"""The tour's checkers: stubs are 'not answered yet', obvious spellings count, hints say what is off."""
from __future__ import annotations

from labkit.exercises import spelling, unanswered
from labkit.exercises.tour import check_fewest_tokens, check_round_trip, check_token_count, check_tokens


def test_a_stub_is_not_answered_yet(capsys):
    assert unanswered(...) and unanswered(None) and not unanswered(0)
    assert check_token_count("gpt2", " hello world", ...) is None
    assert "not answered yet" in capsys.readouterr().out


def test_obvious_spellings_of_a_name_are_accepted():
    assert spelling("GPT-2") == spelling("gpt2") == spelling("Gpt 2")
    assert check_fewest_tokens("    indented", "BERT-bge", ["gpt2", "bert-bge"])
    assert check_token_count("GPT-2", " hello world", 2)
    assert check_tokens("Qwen2", "Hello world", ["Hello", "Ġworld"])


def test_hints_name_what_is_off(capsys):
    assert not check_token_count("gpt2", " hello world", 3)
    assert "3 is too many" in capsys.readouterr().out
    assert not check_tokens("gpt2", " hello world", ["Ġhello", "world"])
    out = capsys.readouterr().out
    assert "token 1 ('world')" in out and "space mark" in out
    assert not check_tokens("gpt2", " hello world", ["Ġhello"])
    assert "too few" in capsys.readouterr().out
    assert not check_fewest_tokens("    indented", "gpt2", ["gpt2", "bert-bge"])
    assert "gpt2 needs" in capsys.readouterr().out
    assert not check_fewest_tokens("x", "llama", ["gpt2", "bert-bge"])
    assert "not one of" in capsys.readouterr().out
    assert not check_round_trip("bert-bge", "Hello", True)
    assert "character 0" in capsys.readouterr().out
