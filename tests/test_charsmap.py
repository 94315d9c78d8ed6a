"""SpmNormalizer == sentencepiece's own normaliser, on the shipped models and on random text."""
from __future__ import annotations

import pytest
import sentencepiece as spm
from hypothesis import given, settings, strategies as st

import labkit
from labkit.algorithms.charsmap import CharsMap, SpmNormalizer, decode_unit, unit_label, unit_offset
from labkit.core import LabkitError
from labkit.formats.spm_model import read_spm_model
from labkit.paths import data_path

MODELS = ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model"]


@pytest.fixture(scope="module", params=MODELS)
def pair(request):
    path = data_path("sentencepiece/" + request.param)
    return SpmNormalizer.from_vocab(read_spm_model(path)), spm.SentencePieceProcessor(model_file=str(path))


def botchan_lines():
    return data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n")


def test_every_botchan_line(pair):
    norm, sp = pair
    for line in botchan_lines():
        assert norm.normalize(line) == sp.normalize(line), line


NFKC_CASES = [
    "Ｈｅｌｌｏ\u3000ｗｏｒｌｄ", "①②⑩", "ﬁne ﬂow ﬃ", "㍿ ㌔ ℡ ™", "ｶﾀｶﾅ ﾊﾟﾝ", "e\u0301 A\u030a o\u0308",
    "\t a\x00b\x7f  c ", "  ", "", " ", "\u3000x\u3000", "½ ¨x", "x\u200by", "Ǆ ǅ ǆ", "ℌ ℍ ℎ", "ｱ\uff9e",
    "\u2581lead", "trail\u2581", "a\u2581\u2581b", "\r\n\n", "\ufffd", "\U0001d400\U0001f600",
]


@pytest.mark.parametrize("text", NFKC_CASES)
def test_nfkc_cases(pair, text):
    norm, sp = pair
    assert norm.normalize(text) == sp.normalize(text)
    assert norm.normalize_bytes(text.encode())[0].decode() == sp.normalize(text)


TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list(" \t\n\u3000\u00a0 ab.,Ａｂ①ﬁ½¨\u0301\u0308\u3099ｶﾞ한글中文e\x00\x1f\x7f\u200b\u2581")),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_hypothesis_matches_sentencepiece(text):
    for name in MODELS:
        norm, sp = _cached(name)
        assert norm.normalize(text) == sp.normalize(text)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_alignment_matches_sentencepiece_offsets(text):
    norm, sp = _cached(MODELS[0])
    normalized, align = norm.normalize_with_alignment(text)
    assert len(align) == len(normalized) + 1
    assert all(0 <= a <= len(text) for a in align) and align == sorted(align)
    # the byte-level algorithm is sentencepiece's literally; the char alignment agrees with it
    data = text.encode()
    nbytes, n2o = norm.normalize_bytes(data)
    assert nbytes.decode() == normalized
    char_of_byte = {len(text[:i].encode()): i for i in range(len(text) + 1)}
    starts = [len(normalized[:k].encode()) for k in range(len(normalized))] + [len(nbytes)]
    assert [char_of_byte[n2o[b]] for b in starts] == align


_CACHE = {}


def _cached(name):
    if name not in _CACHE:
        path = data_path("sentencepiece/" + name)
        _CACHE[name] = (SpmNormalizer.from_vocab(read_spm_model(path)), spm.SentencePieceProcessor(model_file=str(path)))
    return _CACHE[name]


@pytest.mark.parametrize("flags", [
    dict(add_dummy_prefix=True, remove_extra_whitespaces=True),
    dict(add_dummy_prefix=False, remove_extra_whitespaces=True),
    dict(add_dummy_prefix=True, remove_extra_whitespaces=False),
    dict(add_dummy_prefix=False, remove_extra_whitespaces=False),
    dict(add_dummy_prefix=True, remove_extra_whitespaces=True, escape_whitespaces=False),
    dict(add_dummy_prefix=True, remove_extra_whitespaces=False, escape_whitespaces=False),
])
def test_flags_match_sentencepiece_normalizer(flags):
    """sentencepiece's standalone SentencePieceNormalizer with each flag combination."""
    texts = ["  Hello   world  ", " a", "b ", "x  y", "Ｈｉ　ｔｈｅｒｅ  ①", "\u3000 \u3000a", "", "   "]
    ref = spm.SentencePieceNormalizer(rule_name="nfkc", **flags)
    cmap = _cached(MODELS[0])[0].charsmap
    norm = SpmNormalizer(cmap, **flags)
    for text in texts:
        assert norm.normalize(text) == ref.normalize(text), (flags, text)
        assert norm.normalize_bytes(text.encode())[0].decode() == ref.normalize(text), (flags, text)


def test_identity_normalizer_without_charsmap():
    norm = SpmNormalizer(None)
    assert norm.normalize("  Hello   world ") == "\u2581Hello\u2581world"
    assert norm.normalize("Ｈｉ") == "\u2581Ｈｉ"  # no charsmap: nothing is folded
    assert norm.normalize_with_alignment(" ab") == ("\u2581ab", [1, 1, 2, 3])
    assert norm.normalize_bytes(b"a\xffb")[0].decode() == "\u2581a\ufffdb"
    suffix = SpmNormalizer(None, treat_whitespace_as_suffix=True)
    assert suffix.normalize("a b") == "a\u2581b\u2581"


def test_user_defined_symbols_are_verbatim():
    cmap = _cached(MODELS[0])[0].charsmap
    norm = SpmNormalizer(cmap, user_defined=["Ｘ", "Ｘ①"])
    assert norm.normalize("aＸ①Ｘ②") == "\u2581aＸ①Ｘ2"


def test_xcda_units_decode():
    cmap = _cached(MODELS[0])[0].charsmap
    root = cmap.units[0]
    assert decode_unit(root)["offset"] == unit_offset(root)
    walk = cmap.walk("①".encode())
    assert walk[-1]["replacement"] == "1" and all(r["match"] for r in walk)
    # the first byte's unit carries that byte as its label
    assert unit_label(cmap.units[walk[0]["index"]]) == 0xE2
    entries = dict(cmap.entries())
    assert entries["①".encode()] == "1" and entries["Ａ".encode()] == "A"
    assert cmap.longest_match("ﬁx".encode()).replacement == "fi"
    assert cmap.longest_match(b"plain") is None


def test_bad_input_raises_labkit_error():
    with pytest.raises(LabkitError):
        CharsMap(b"\x01\x00")
    with pytest.raises(LabkitError):
        CharsMap(b"\xff\xff\x00\x00abcd")
    with pytest.raises(LabkitError):
        SpmNormalizer(None).normalize(b"bytes")
    with pytest.raises(LabkitError):
        SpmNormalizer(None).normalize_bytes("str")


def test_a_charsmaps_shape_is_found_once_per_blob_and_is_the_walks():
    """char_shape is kept per blob for the process (every SentencePiece model that shares
    nmt_nfkc shares it): a second CharsMap of the same bytes gets the same answer without a walk,
    and that answer is what the walk finds."""
    from labkit.algorithms import charsmap as module

    blob = labkit.load("botchan-unigram").vocab.normalizer["charsmap"]
    first = module.CharsMap(blob).char_shape()
    second = module.CharsMap(bytes(blob)).char_shape()
    assert second is first and first == module.CharsMap(blob)._walk_char_shape()
    assert "Ａ" in first[0] and "\u0301" in first[1]
