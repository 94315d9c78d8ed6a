"""Random .tiktoken files (labkit.conformance.random_tiktoken): every engine gives tiktoken's
own ids and text, or refuses the file at load; and the check can fail."""
from __future__ import annotations

from collections import Counter
from unittest import mock

import pytest

import labkit
import labkit.engines.labkit_bpe_byte as byte_engine
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
    real = byte_engine.bpe_rank_chunks

    def counted(*args):
        calls["long words"] += 1
        return real(*args)

    seed = next(s for s in SEEDS if "missing_byte" not in rt.draw_file(s).edits)  # else bytes go the slow way
    with mock.patch.object(byte_engine, "bpe_rank_chunks", counted):
        assert rt.check_seed(seed, tmp_path, engines=("labkit",), corpus=[]) == {"labkit": "exact"}
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


def _file_without_z(tmp_path):
    import base64

    ranks = {bytes([b]): b for b in range(256) if b != ord("z")}
    ranks.update({b"ab": 256, b"zq": 257, b"zzz": 258})
    path = tmp_path / "no_z.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    import tiktoken

    return path, tiktoken.Encoding("no_z", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})


def test_a_byte_with_no_rank_merges_like_tiktoken_and_fails_where_tiktoken_fails(tmp_path):
    """tiktoken keeps a byte with no rank as a part (a merge may take it in) and panics if it is
    left alone; labkit gave an answer there (it dropped the byte, as tokenizers does)."""
    path, reference = _file_without_z(tmp_path)
    tok = labkit.load(path, engine="labkit", pre="gpt-2")
    for text in ("zqab", "zzz", "ab zq", "a" * 40 + "zq"):  # the last goes through the long-word loop
        assert tok.encode(text).ids == reference.encode_ordinary(text)
    for text in ("zab", "a" * 40 + "z"):
        with pytest.raises(BaseException):  # tiktoken: a Rust panic
            reference.encode_ordinary(text)
        with pytest.raises(labkit.LabkitError, match="byte 0x7A"):
            tok.encode(text)


def test_the_hf_engine_refuses_a_tiktoken_file_missing_a_byte(tmp_path):
    path, _ = _file_without_z(tmp_path)
    with pytest.raises(labkit.LabkitError, match="0x7A has no rank"):
        labkit.load(path, engine="hf", pre="gpt-2")


def test_the_hf_engine_cuts_whitespace_at_the_end_as_cl100k_does(tmp_path):
    """Seed 1050: the hf engine handed tokenizers the Llama-3 regex for cl100k, which cuts
    ' \\n ' at the end of a text into ' \\n' + ' '; cl100k keeps it whole (so BPE gives
    ' ' + '\\n '). The shipped cl100k ranks hide it; a user's file need not."""
    import base64

    import tiktoken

    from labkit.algorithms.pretokenize import get_pre_tokenizer

    ranks = {bytes([b]): b for b in range(256)} | {b"\n ": 256}
    path = tmp_path / "newline_space.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    reference = tiktoken.Encoding("ns", pat_str=get_pre_tokenizer("cl100k").pattern, mergeable_ranks=ranks,
                                  special_tokens={})
    for engine in ("hf", "labkit", "tiktoken"):
        tok = labkit.load(path, engine=engine, pre="cl100k")
        for text in ("a \n ", "x\t\n ", "a \n b"):
            assert tok.encode(text).ids == reference.encode_ordinary(text), (engine, text)
    assert reference.encode_ordinary("a \n ") == [97, 32, 256]
