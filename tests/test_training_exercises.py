"""The notebook-13 checkers: hand-computed answers pass, wrong ones fail, stubs say so."""
from __future__ import annotations

import pytest
import sentencepiece as spm

from labkit.exercises.training import (
    check_em_step,
    check_most_likely_sample,
    check_spread_at_zero,
    em_step,
    segmentation_count,
)
from labkit.paths import data_path

CORPUS = {"ab": 2, "abc": 1, "bc": 1}
START = dict.fromkeys(["a", "b", "c", "ab", "bc"], 0.2)
# by hand: "ab" splits a|b (0.04) or ab (0.2) -> 1/6, 5/6; "bc" likewise; "abc": a|b|c 0.008,
# ab|c 0.04, a|bc 0.04 -> 1/11, 5/11, 5/11. Expected counts: a 2/6+6/11, b 3/6+1/11,
# c 1/6+6/11, ab 10/6+5/11, bc 5/6+5/11; total 5.5909...
HAND = {"a": (2 / 6 + 6 / 11), "b": (3 / 6 + 1 / 11), "c": (1 / 6 + 6 / 11), "ab": (10 / 6 + 5 / 11), "bc": (5 / 6 + 5 / 11)}
HAND = {k: v / sum(HAND.values()) for k, v in HAND.items()}


def test_em_step_matches_the_hand_computation(capsys):
    assert em_step(CORPUS, START) == pytest.approx(HAND)
    assert check_em_step(CORPUS, START, {k: round(v, 4) for k, v in HAND.items()}) is True
    assert check_em_step(CORPUS, START, START) is False
    assert check_em_step(CORPUS, START, None) is None
    lines = capsys.readouterr().out.split("\n")
    assert lines[0] == "right" and lines[1].startswith("wrong: ") and lines[2].startswith("not answered yet")


def test_alpha_limits_checkers_agree_with_sentencepiece():
    sp = spm.SentencePieceProcessor(model_file=str(data_path("sentencepiece/botchan_en_unigram_1000.model")))
    for text in ("Hello", "the school", "botchan"):
        assert check_most_likely_sample(text, sp.encode(text, out_type=str)) is True
        # sentencepiece lists every segmentation when asked for more than there are
        count = len(sp.nbest_encode_as_ids(text, 512))
        assert segmentation_count(text) == count
        assert check_spread_at_zero(text, 1 / count) is True
        assert check_spread_at_zero(text, f"1/{count}") is True
        assert check_spread_at_zero(text, 1 / (count + 1)) is False
    assert check_most_likely_sample("Hello", ...) is None
