"""The lattice explorer (labkit/viz/lattice_explorer.py): the static figure, the ranked
table against sentencepiece, and the widget's controls driven from code."""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import pytest
import sentencepiece as spm

from labkit.training.unigram_sampling import UnigramSampler
from labkit.core import LabkitError
from labkit.paths import data_path
from labkit.viz.lattice_explorer import LatticeExplorer, draw_paths, paths_table

MODEL = data_path("sentencepiece/botchan_en_unigram_1000.model")


@pytest.fixture(scope="module")
def sampler():
    return UnigramSampler.load(str(MODEL))


def test_table_ranks_every_segmentation(sampler):
    sp = spm.SentencePieceProcessor(model_file=str(MODEL))
    rows = paths_table(sampler, "school", 0.5, limit=1000)
    assert len(rows) == len(sp.nbest_encode_as_ids("school", 512))
    assert math.fsum(r["probability"] for r in rows) == pytest.approx(1.0)
    assert rows[0]["segmentation"].split(" | ") == sp.encode("school", out_type=str)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)


def test_static_figure_draws_all_rows(sampler):
    ax = draw_paths(sampler, "What is LoRA?", k=3, alpha=0.2, samples=2, seed=1)
    labels = {t.get_text() for t in ax.texts}
    assert {"best", "#2", "#3", "sample 1", "sample 2"} <= labels
    with pytest.raises(LabkitError):
        draw_paths(sampler, "x" * 200)


def test_widget_controls_redraw(sampler, capsys):
    explorer = LatticeExplorer({"botchan": sampler}, text="Hello")
    explorer.alpha.value = 2.0
    explorer.k.value = 5
    explorer.text.value = "x" * 200  # too long to draw: the message is shown, nothing raised
    explorer.path.value = "/nonexistent/file.model"
    explorer.load_file()
    assert list(explorer.vocab.options) == ["botchan"]
    explorer.path.value = str(MODEL)
    explorer.load_file()
    assert explorer.vocab.value == str(MODEL)
