"""The small byte-level BPE trainer: a hand-checked merge sequence and round trips."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

import labkit
from labkit.algorithms.bpe_train import train_bpe
from labkit.engines.labkit_bpe_byte import build
from support.texts import texts


def test_hand_checked_merge_sequence():
    # "aaabdaaabac" (one pre-token). Pair counts by hand:
    #   aa:4 ab:2 bd:1 da:1 ba:1 ac:1            -> merge (a,a)
    #   [aa a b d aa a b a c]: (aa,a):2 (a,b):2  -> tie, smaller pair (a,b) wins
    #   [aa ab d aa ab a c]: (aa,ab):2           -> merge (aa,ab)
    #   [aaab d aaab a c]: all 1, smallest is (a,c)
    #   [aaab d aaab ac]: (aaab,ac) < (aaab,d) < (d,aaab)
    trained = train_bpe(["aaabdaaabac"], vocab_size=256 + 5)
    assert [(s.pair, s.count) for s in trained.steps] == [
        ((b"a", b"a"), 4), ((b"a", b"b"), 2), ((b"aa", b"ab"), 2), ((b"a", b"c"), 1), ((b"aaab", b"ac"), 1)]
    assert [s.new_id for s in trained.steps] == [256, 257, 258, 259, 260]
    assert trained.vocab[258] == b"aaab"


def test_word_frequencies_weight_pairs():
    # "hug" x3 and "pug" x1: (u,g) occurs 4 times, (h,u) 3 -> (u,g) first, then (h,ug)
    trained = train_bpe(["hug hug hug pug"], vocab_size=258)
    assert trained.merges == [(b"u", b"g"), (b" ", b"h")] or trained.merges == [(b"u", b"g"), (b"h", b"ug")]
    assert trained.merges[0] == (b"u", b"g") and trained.steps[0].count == 4


def test_pre_tokenization_stops_merges_at_word_boundaries():
    trained = train_bpe(["ab ab ab"], vocab_size=300)
    # " ab" is a pre-token; "b" + " " never merges because they sit in different words
    assert all(not (a.endswith(b"b") and b.startswith(b" ")) for a, b in trained.merges)


@pytest.fixture(scope="module")
def trained_engine():
    corpus = ["The quick brown fox jumps over the lazy dog. 日本語のテキスト 12345 😀"] * 3
    return build(train_bpe(corpus, vocab_size=320).to_vocab_data())


@settings(max_examples=200, deadline=None)
@given(texts)
def test_trained_vocab_round_trips_any_text(trained_engine, text):
    ids = trained_engine.encode(text).ids
    assert trained_engine.decode(ids) == text


def test_trained_engine_uses_the_merges(trained_engine):
    assert len(trained_engine.encode("The quick brown fox").ids) < len("The quick brown fox")


def test_bad_arguments():
    with pytest.raises(labkit.LabkitError):
        train_bpe(["x"], vocab_size=10)
    with pytest.raises(labkit.LabkitError):
        train_bpe([b"bytes"], vocab_size=300)  # type: ignore[list-item]
