"""Random .tiktoken files (labkit.conformance.random_tiktoken): every engine gives tiktoken's
own ids and text, or refuses the file at load; and the check can fail."""
from __future__ import annotations

from collections import Counter
from unittest import mock

import pytest

import labkit
from labkit.conformance import random_tiktoken as rt

SEEDS = range(0, 40)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("random_tiktoken")
    return {seed: rt.check_seed(seed, folder) for seed in SEEDS}


def test_no_engine_differs_from_tiktoken(outcomes):
    differing = {(seed, engine): result for seed, results in outcomes.items()
                 for engine, result in results.items() if result.startswith("differs")}
    assert differing == {}


def test_labkit_serves_every_drawn_file_and_refusals_say_why(outcomes):
    counts = Counter(result.split(":", 1)[0] for results in outcomes.values() for result in [results["labkit"]])
    assert counts == {"exact": len(SEEDS)}
    hf_refusals = [results["hf"] for results in outcomes.values() if results["hf"].startswith("refused")]
    assert hf_refusals and all("rank" in why for why in hf_refusals)  # the refusal names the token's rank


def test_the_draws_cover_every_edit_split_and_the_long_word_loop(tmp_path):
    drawn = [rt.draw_file(seed) for seed in SEEDS]
    assert {edit for d in drawn for edit in d.edits} == set(rt.EDITS)
    assert len({d.pre for d in drawn}) >= 6
    calls = Counter()
    real = labkit.engines.labkit_bpe_byte.bpe_rank_buckets

    def counted(*args):
        calls["long words"] += 1
        return real(*args)

    with mock.patch.object(labkit.engines.labkit_bpe_byte, "bpe_rank_buckets", counted):
        assert rt.check_seed(5, tmp_path, engines=("labkit",), corpus=[]) == {"labkit": "exact"}
    assert calls["long words"] >= 3  # the long runs of random_texts go through it


def test_a_lookup_first_change_is_caught(tmp_path):
    """tiktoken looks a whole piece up before merging; an engine that merges instead differs on
    an orphan word (a token no merge reaches) and the check says where."""
    seed = next(s for s in SEEDS if "orphan_words" in rt.draw_file(s).edits)
    drawn = rt.draw_file(seed)
    path = rt.write_file(drawn, tmp_path)
    tok = labkit.load(path, engine="labkit", pre=drawn.pre)
    tok.ignore_merges = False  # what the engine would do without tiktoken's lookup
    reference = rt.reference_encoding(drawn)
    difference = rt._first_difference(tok, reference, rt.random_texts(drawn), [])
    assert difference is not None and difference.startswith("encode")


def test_the_command_prints_totals(capsys):
    assert rt.main(["--seeds", "0:3", "--engines", "labkit,tiktoken"]) == 0
    out = capsys.readouterr().out
    assert "labkit: exact 3, refused 0, skipped 0, differs 0" in out
