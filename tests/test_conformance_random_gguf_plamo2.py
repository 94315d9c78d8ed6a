"""PLaMo-2 GGUF files (tokenizer.ggml.model "plamo2") as llama.cpp serves them: 100 random files
against llama.cpp's stored answers (labkit.conformance.random_gguf_plamo2)."""
from __future__ import annotations

from collections import Counter

import pytest

import labkit
from support import random_gguf as random_gguf_answers
from labkit.algorithms import plamo2
from labkit.conformance import random_gguf as rg
from labkit.conformance import random_gguf_plamo2 as rgp
from labkit.conformance.random_gguf_spm import BYTE_TOKENS, DrawnSpmGguf


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("plamo2")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("plamo2")


def test_labkit_gives_llama_cpps_answers_or_refuses_what_llama_cpp_cannot_load(outcomes, reference):
    counts = Counter(r["labkit"].split(":")[0] for r in outcomes.values())
    assert counts["differs"] == 0, {s: r["labkit"] for s, r in outcomes.items() if r["labkit"].startswith("differs")}
    for seed, results in outcomes.items():
        if "refused" in reference[seed]:  # a byte token missing
            assert "no byte token" in results["labkit"], seed
        elif results["labkit"] != "exact":
            assert "hash map's order" in results["labkit"], (seed, results["labkit"])
    assert counts["exact"] >= 90, counts


@pytest.mark.parametrize("engine", ["hf", "sentencepiece", "tiktoken"])
def test_reference_engines_refuse_every_plamo2_gguf(outcomes, engine):
    assert all(r[engine].startswith("refused") for r in outcomes.values())


def test_the_draws_cover_every_rule(reference):
    drawn = [rgp.draw_file(s) for s in rgp.SEEDS]
    hows = " ".join(d.how for d in drawn)
    for rule in ("scores tied", "scores zero", "a score not finite", "a byte missing", "unigram", "meta"):
        assert rule in hows, rule
    texts = [t for d in drawn[:20] for t in rgp.texts_for(d)]
    assert any(t.startswith("\ufeff") for t in texts)  # llama.cpp drops a leading byte order mark
    assert {f for d in drawn for f in d.flags} == set(rgp.FLAGS)


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # the shortest token winning a tie (llama.cpp: the longest) is not llama.cpp's cut
    monkeypatch.setattr(plamo2.Plamo2Model, "pieces", _shortest_first)
    tied = [seed for seed in rgp.SEEDS if "refused" not in reference[seed]
            and any(shape in rgp.draw_file(seed).how for shape in ("scores tied", "scores zero"))]
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",), family="plamo2")["labkit"]
               for seed in tied[:15]]
    assert sum(r.startswith("differs") for r in results) >= 3, results


def _shortest_first(model, text):
    """Plamo2Model.pieces with one change: of equal costs the shortest token wins."""
    start = 1 if text[:1] == "\ufeff" else 0
    n, best, step = len(text), [0] * (len(text) + 1), [(1, -1)] * (len(text) + 1)
    for i in range(n - 1, start - 1, -1):
        lowest, choice = 1 << 60, (1, -1)
        for length in range(1, n - i + 1):
            found = model.cost.get(text[i:i + length])
            if found is not None and best[i + length] - found[1] < lowest:
                lowest, choice = best[i + length] - found[1], (length, found[0])
        if best[i + 1] - plamo2.UNKNOWN_SCORE < lowest:
            lowest, choice = best[i + 1] - plamo2.UNKNOWN_SCORE, (1, -1)
        best[i], step[i] = lowest, choice
    out, i = [], start
    while i < n:
        length, token = step[i]
        out += [(token, i, i + length)] if token >= 0 else [(model.byte_ids[b], i, i + 1) for b in text[i].encode()]
        i += length
    return out


def test_a_score_that_stops_llama_cpps_scan_is_refused(tmp_path):
    # a token scored exactly -1000 (-10**7 in llama.cpp's table) ends its scan of shorter tokens
    tokens = [*BYTE_TOKENS, "<unk>", "ab", "a", "b"]
    drawn = DrawnSpmGguf(0, ["<pad>", *tokens], [0.0] * 257 + [0.0, -1000.0, -1.0, -1.0], [3] + [6] * 256 + [2, 1, 1, 1])
    with pytest.raises(labkit.LabkitError, match="unknown cost"):
        labkit.load(rgp.write_file(drawn, tmp_path), engine="labkit")
