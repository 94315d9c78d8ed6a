"""Where the ``tokenizers`` engine and the ``sentencepiece`` engine disagree on a SentencePiece
``.model``, and why: each class is pinned here with the libraries' own answers, and the
predicates in ``support/disagreements.py`` are what the agreement tests (test_conformance.py)
use to skip exactly those classes.

Classes found on botchan-bpe (nmt_nfkc charsmap) and botchan-unigram (nfkc charsmap):

1. tokenizers' ``Precompiled`` normaliser works per grapheme cluster. A cluster under 6
   UTF-8 bytes is looked up whole: the shortest charsmap key it starts with is replaced and
   the rest of the cluster is dropped (``"ｅ" + U+0301`` -> ``"e"``, sentencepiece ``"é"``).
   A cluster of 6 or more bytes is looked up one character at a time, so keys longer than
   one character never match (``"e" + 3 × U+0301`` stays as it is; sentencepiece composes
   ``"é"``). A library behaviour: no pipeline step can reach inside ``Precompiled``.
2. Decoding leading whitespace pieces: with ``remove_extra_whitespaces`` sentencepiece drops
   the ``▁`` of every piece until some text has come out (``▁ ▁ ▁a`` -> ``"a"``); the
   ``tokenizers`` decoders strip one space from the start (``"  a"``). Decoders there keep
   no state across tokens, so no decoder chain can express it.
3. (fixed in labkit/engines/hf.py) sentencepiece strips trailing ``▁`` after escaping
   whitespace, a literal U+2581 kept by the charsmap included (botchan-unigram's nfkc keeps
   it; nmt_nfkc maps it to a space). The pipeline now ends with ``Replace("▁+\\z", "")``.

Notebook 03 (section "When the references disagree") shows one example of each.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import normalizers

import labkit
from support.disagreements import SPACE, charsmap_steps, charsmap_step_differs, leading_space_pieces_differ
from support.engines import compared

SPM_FILES = ["botchan-bpe", "botchan-unigram"]


def engines(name: str) -> tuple[labkit.Tokenizer, labkit.Tokenizer]:
    return compared(name, "hf"), compared(name, "sentencepiece")


# ----------------------------------------------------------------------------- class 1, pinned


@pytest.mark.parametrize("name", SPM_FILES)
def test_precompiled_drops_the_rest_of_a_short_cluster(name):
    hf, sp = engines(name)
    ours, theirs, _ = charsmap_steps(name)
    # fullwidth e + combining acute: 5 bytes, one cluster; the key 'ｅ' matches, the accent is lost
    assert ours.normalize_str("\uff45\u0301") == "e"
    assert theirs.normalize("\uff45\u0301") == "\u00e9"
    assert hf.encode("\uff23\uff41\uff46\uff45\u0301").tokens == ["▁C", "a", "f", "e"]
    assert sp.encode("\uff23\uff41\uff46\uff45\u0301").tokens == ["▁C", "a", "f", "<unk>"]
    assert charsmap_step_differs(name, "x \uff45\u0301") and not charsmap_step_differs(name, "x \uff45 \u0301")


def test_precompiled_drops_mark_after_u2581_in_nmt_nfkc():
    # H4's input: nmt_nfkc maps U+2581 to a space, and the combining mark after it goes with it
    hf, sp = engines("botchan-bpe")
    assert hf.encode("\x84\u2581\u0316").tokens == ["▁", "<unk>"]
    assert sp.encode("\x84\u2581\u0316").tokens == ["▁", "<unk>", "▁", "<unk>"]
    assert charsmap_step_differs("botchan-bpe", "\x84\u2581\u0316")
    # botchan-unigram's nfkc keeps U+2581: the same text is no disagreement there
    hf_u, sp_u = engines("botchan-unigram")
    assert not charsmap_step_differs("botchan-unigram", "\x84\u2581\u0316")
    assert hf_u.encode("\x84\u2581\u0316").ids == sp_u.encode("\x84\u2581\u0316").ids


@pytest.mark.parametrize("name", SPM_FILES)
def test_precompiled_looks_up_long_clusters_char_by_char(name):
    hf, sp = engines(name)
    ours, theirs, _ = charsmap_steps(name)
    text = "e" + "\u0301" * 3  # 7 bytes: the two-character key e + U+0301 is never tried
    assert ours.normalize_str(text) == text
    assert theirs.normalize(text) == "\u00e9\u0301\u0301"
    assert hf.encode(text).tokens == ["▁e", "<unk>"]
    assert sp.encode(text).tokens == ["▁", "<unk>"]


# ----------------------------------------------------------------------------- class 2, pinned


@pytest.mark.parametrize("name", SPM_FILES)
def test_decoding_leading_whitespace_pieces(name):
    hf, sp = engines(name)
    ids = [hf.token_to_id(t) for t in ["▁", "▁", "▁a"]]
    assert hf.backend.decode(ids) == "  a"
    assert sp.backend.decode(ids) == "a"
    assert leading_space_pieces_differ(hf, ids)
    assert hf.decode(ids[1:]) == " a" and sp.decode(ids[1:]) == "a"
    plain = [hf.token_to_id(t) for t in ["▁", "a"]]  # '▁' then a piece without '▁': both give "a"
    assert not leading_space_pieces_differ(hf, plain)
    assert hf.decode(plain) == sp.decode(plain) == "a"


@pytest.mark.parametrize("name", SPM_FILES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decode_differs_exactly_where_predicted(name, data):
    hf, sp = engines(name)
    space = hf.token_to_id(SPACE)
    normal = st.integers(4, hf.vocab_size - 1).filter(lambda i: not hf.is_special_id(i))
    ids = data.draw(st.lists(st.one_of(st.just(space), st.sampled_from([1, 2]), normal), max_size=6))
    for skip in (False, True):
        differs = hf.decode(ids, skip_special_tokens=skip) != sp.decode(ids, skip_special_tokens=skip)
        assert differs == leading_space_pieces_differ(hf, ids, skip), ([hf.vocab.tokens[i] for i in ids], skip)


# ----------------------------------------------------------------------------- class 3, fixed


@pytest.mark.parametrize(
    "text,expected",
    [("Hello\u2581", ["▁He", "ll", "o"]), ("\u2581 \u2581\u2581", []), ("a\u2581<s>\u2581", ["▁a", "▁", "<unk>", "s", "<unk>"])],  # <s> is text to sentencepiece (< and > are unknown)
)
def test_trailing_u2581_is_stripped_like_sentencepiece(text, expected):
    hf, sp = engines("botchan-unigram")
    assert sp.encode(text).tokens == expected
    assert hf.encode(text).tokens == expected
    # the pipeline's last step is what does it
    steps = hf.backend.normalizer
    without = normalizers.Sequence([steps[i] for i in range(len(steps) - 1)])
    assert steps.normalize_str("Hello\u2581") == "▁Hello"
    assert without.normalize_str("Hello\u2581") == "▁Hello▁"


# ----------------------------------------------------------------------------- everything else agrees

FRAGMENTS = [
    "\u2581", "\u2581\u2581", " \u2581", "\u2581 ", " ", "   ", "\t", "\n", "\r\n", "\u3000", "\u00a0", "\u2003",
    "\u200b", "\ufeff", "\x00", "\x1b", "\x84", "\x7f", "\u00a8", "\u2028", "\ufb01", "\u2160", "\u00bc", "\u0130",
    "ｈｅｌｌｏ", "ｶﾀｶﾅ", "Ａ", "e\u0301", "\u1100\u1161\u11a8", "<s>", "</s>", "<unk>", "the", "Hello", " world",
    "😀", "日本", "'s", "3.14",
]
MARKS = st.characters(min_codepoint=0x300, max_codepoint=0x36F)
TEXTS = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), MARKS, st.text(st.characters(exclude_categories=("Cs",)), max_size=4)),
    max_size=10,
).map("".join)


def check_agree_outside_classes(name: str, text: str) -> None:
    hf, sp = engines(name)
    if charsmap_step_differs(name, text):
        return
    for parse_special in (True, False):
        a = hf.encode(text, parse_special=parse_special)
        b = sp.encode(text, parse_special=parse_special)
        assert (a.ids, a.tokens) == (b.ids, b.tokens), (name, parse_special, text)
        if hf.special_tokens.unk_id not in a.ids and not leading_space_pieces_differ(hf, a.ids):
            assert hf.decode(a.ids) == sp.decode(a.ids), (name, text)


@pytest.mark.parametrize("name", SPM_FILES)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_engines_agree_outside_the_classes(name, text):
    check_agree_outside_classes(name, text)


@pytest.mark.parametrize("name", SPM_FILES)
def test_seeded_sweep_agrees_outside_the_classes(name):
    # a fixed sample of mixed fragments and random code points, the same every run
    rng = random.Random(2026)
    for _ in range(300):
        parts = [rng.choice(FRAGMENTS) if rng.random() < 0.6 else chr(rng.choice([rng.randint(0x20, 0x3000), rng.randint(0x300, 0x36F)])) for _ in range(rng.randint(1, 8))]
        check_agree_outside_classes(name, "".join(parts))
