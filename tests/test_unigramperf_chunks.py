"""The Unigram fast paths keep sentencepiece's ids: a long word without spaces (Chinese) is
cached in chunks whose spans are found only when the running total makes a chunk unsafe, and
the same cached word is met at many different totals; the normaliser's memo and
``str.replace`` paths give what the chunk-by-chunk walk gives."""
from __future__ import annotations

import random

import pytest

import labkit
from labkit.bench.texts import chinese_text, mixed_text

NAME = "botchan-unigram"


@pytest.fixture(scope="module")
def engines():
    return labkit.load(NAME, engine="labkit"), labkit.load(NAME, engine="sentencepiece").backend


def test_a_long_word_at_many_totals(engines):
    tok, sp = engines
    chinese = chinese_text(0.03).replace("\n", "")
    tok.clear_cache()
    # the same long word after English of growing length: each run meets it at another total
    for words in (0, 1, 7, 50, 400, 3000):
        text = " ".join(["the"] * words) + " " + chinese
        assert tok.encode_ordinary(text) == sp.encode(text), words
    # every prefix length class of the word itself, warm
    for size in (1, 63, 64, 65, 200, 5000, len(chinese)):
        assert tok.encode_ordinary(chinese[:size]) == sp.encode(chinese[:size]), size


def test_mixed_text_warm_and_cold(engines):
    tok, sp = engines
    text = mixed_text(0.05)
    expected = sp.encode(text)
    tok.clear_cache()
    assert tok.encode_ordinary(text) == expected
    assert tok.encode_ordinary(text) == expected
    assert tok.encode(text, parse_special=False).ids == expected


def test_normalize_fast_paths_equal_the_walk(engines):
    tok, _ = engines
    norm = tok.normalizer
    keys, second = norm.charsmap.char_shape()
    rng = random.Random(7)
    few = list("，。；：！？ＡＢ①") + list("abc 你好")
    many = sorted(keys)[:3000] + sorted(second) * 3 + list("abc  你好😀")
    for pool in (few, many):
        for _ in range(300):
            text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 40)))
            walked = norm._finish(norm._chunks(text), len(text))[0]
            assert norm.normalize(text) == walked, repr(text)
