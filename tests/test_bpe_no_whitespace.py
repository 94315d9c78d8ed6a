"""Long inputs without whitespace (digits, letters, unknown characters): the BPE engines merge
them piece by piece where no merge can cross, and still give the reference's ids, and the
offsets of the uncut merge."""
from __future__ import annotations

import random

import pytest

import labkit

# letters, digits, characters the small vocabularies lack (unknown, or byte fallback)
ALPHABET = "abcdefghijklmnopqrstuvwxyz" * 3 + "0123456789" * 3 + "éü日本語😀🦙Ωж"


def _texts(seed: int, count: int, longest: int) -> list[str]:
    rng = random.Random(seed)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(200, longest))) for _ in range(count)]
    spaced = " ".join("".join(rng.choice(ALPHABET) for _ in range(300)) for _ in range(3))
    return texts + [spaced, "1234567890" * 60, "日日日😀😀" * 80, "supercalifragilisticexpialidocious" * 12]


@pytest.mark.parametrize("name", ["llama-spm", "botchan-bpe"])
def test_spm_bpe_long_chunks_match_sentencepiece(name, tokenizer):
    mine, reference = labkit.load(name, engine="labkit"), tokenizer(name, "sentencepiece")
    for text in _texts(1, 25, 1500):
        assert mine.encode(text).ids == reference.encode(text).ids, text[:60]
        assert mine.encode_ordinary(text) == reference.backend.encode(text), text[:60]


@pytest.mark.parametrize("name", ["llama-spm", "botchan-bpe"])
def test_spm_bpe_cut_changes_no_offsets(name):
    cut, whole = labkit.load(name, engine="labkit"), labkit.load(name, engine="labkit")
    whole.model._joinable, whole.model._isolated_class = None, None  # merge every chunk whole
    assert whole.model.cut("abc") == ["abc"] and whole.model.isolated_runs("123") == ["123"]
    for text in _texts(2, 15, 1200):
        a, b = cut.encode(text), whole.encode(text)
        assert (a.ids, a.offsets) == (b.ids, b.offsets), text[:60]


def test_cut_keeps_unknown_runs_together():
    from labkit.algorithms.spm_bpe import SpmBpeModel

    model = SpmBpeModel(["<unk>", "a", "b", "ab"], [0, -1, -2, -0.5], [2, 1, 1, 1])
    # 'x' and 'y' are unknown: without byte fallback they fuse into one <unk>, so no cut between
    assert model.cut("abxyba") == ["ab", "xy", "b", "a"]
    assert model.pieces_to_ids(model.merge("xy")) == [(0, 0, 2)]


def test_cut_is_off_with_unused_pieces():
    from labkit.algorithms.spm_bpe import SpmBpeModel

    model = SpmBpeModel(["<unk>", "a", "b", "ab", "c"], [0, -1, -2, -0.5, -3], [2, 1, 1, 5, 1])
    assert model.cut("abcab") == ["abcab"]
