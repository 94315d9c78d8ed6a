"""A t5 GGUF as llama.cpp's converter writes a real T5 (a precompiled charsmap, and the
``<extra_id_N>`` sentinels as user-defined tokens): llama.cpp's normaliser copies text that walks
down the user-defined tokens' trie as it is, a whole token or not, so ``<e`` + U+0301 is not
composed there. The expected ids are llama.cpp's (llama-cpp-python 0.3.36, llama.cpp 0c1e5709)
for the file this test writes; labkit refused such files before (and, until it stepped through
bytes as llama.cpp does, any with a non-ASCII user-defined token)."""
from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.algorithms.charsmap import SpmNormalizer
from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.formats.spm_model import read_spm_model
from labkit.paths import data_path

SHA256 = "a415e184d5d961ea7c094a119ec0863a72d3ebd81e33322f570faf8c01f44c90"  # the file llama.cpp answered for
LLAMA_CPP_IDS = [
    ('<e\u0301', [4, 0, 16, 0]),
    ('<extra_id_1>x', [1001, 4, 297]),
    ('<extra_id_1', [4, 0, 16, 297, 15, 30, 19, 0, 140, 0, 357]),
    ('<ex\uff21', [4, 0, 16, 297, 194]),
    ('a <extra_id_10> b', [11, 1010, 80]),
    ('<<\uff45', [4, 0, 16]),
    ('\uff1cextra_id_0\uff1e', [4, 1000]),
    ('<extra_id_11>', [1011]),
    ('Hello <e\u0301t\xe9> world', [151, 88, 21, 4, 0, 16, 0, 15, 0, 887]),
    ('x<\u2126', [4, 297, 0]),
    ('<extr\xc5', [4, 0, 16, 297, 15, 30, 0]),
    ('<extra_id_\uff11>', [4, 1001]),
    ('  <e  x  ', [4, 0, 16, 4, 297]),
    ('\xe9<e\u0301<', [4, 0, 16, 0]),
]


@pytest.fixture(scope="module")
def t5_like(tmp_path_factory):
    sentinels = [f"<extra_id_{i}>" for i in range(12)]
    return botchan_t5_with(tmp_path_factory.mktemp("t5") / "t5-like.gguf", sentinels, SHA256, {"bos": 1, "eos": 2})


def botchan_t5_with(path, user_defined: list[str], sha256: str, ids=None) -> labkit.Tokenizer:
    """botchan's Unigram model and charsmap as a t5 GGUF, with ``user_defined`` tokens at the end
    (score -1000); ``sha256`` is the file llama.cpp answered for."""
    base = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    n = len(user_defined)
    write_vocab_gguf(path, "t5", [*base.tokens, *user_defined], [*base.token_types, *[4] * n], arch="t5", pre="default",
                     scores=[*base.scores, *[-1000.0] * n], charsmap=bytes(base.normalizer["charsmap"]),
                     ids={"unknown": 0, **(ids or {})}, flags={"add_space_prefix": True, "remove_extra_whitespaces": True})
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    return labkit.load(path, engine="labkit")


@pytest.mark.parametrize("text,ids", LLAMA_CPP_IDS)
def test_a_t5_gguf_with_sentinels_and_a_charsmap_is_llama_cpps(t5_like, text, ids):
    assert t5_like.encode(text, parse_special=False).ids == ids


def test_the_partial_match_is_what_makes_it_exact(t5_like, monkeypatch):
    # walking only whole tokens (sentencepiece's rule) composes '<e' + U+0301 and differs from llama.cpp
    monkeypatch.setattr(SpmNormalizer, "_user_path_bytes", lambda self, data, pos: 0)
    differ = [text for text, ids in LLAMA_CPP_IDS if t5_like.encode(text, parse_special=False).ids != ids]
    assert len(differ) == 3 and "<e\u0301" in differ


CJK_SHA256 = "3b65b1d702a60d3c103308552daec7d627afcef299abca5b3e9c62ccba99af54"  # the file llama.cpp answered for
# '東' is E6 9D B1 and '木' E6 9C A8: the trie walks '<' and E6, stops inside '木', and copies both
CJK_LLAMA_CPP_IDS = [
    ("<東> is east", [1000, 47, 250, 19, 85]),
    ("<木> is a tree", [4, 0, 47, 11, 680]),
    ("the <é> and <è> and <e\u0301>", [7, 1001, 13, 4, 0, 13, 4, 1001]),
    ("<東京>", [4, 0]),
    ("café <ê>", [78, 19, 57, 0, 4, 0]),
    ("<\u00e9\u0301>", [4, 0]),
    ("<Ｅ>", [4, 0, 120, 0]),
]


@pytest.fixture(scope="module")
def t5_cjk(tmp_path_factory):
    return botchan_t5_with(tmp_path_factory.mktemp("t5") / "t5-cjk.gguf", ["<東>", "<é>"], CJK_SHA256)


@pytest.mark.parametrize("text,ids", CJK_LLAMA_CPP_IDS)
def test_a_non_ascii_user_defined_token_is_llama_cpps_even_where_it_splits_a_character(t5_cjk, text, ids):
    assert t5_cjk.encode(text, parse_special=False).ids == ids


def test_only_a_char_sharing_a_lead_byte_with_another_sends_the_text_through_bytes(t5_cjk):
    normalizer = t5_cjk.normalizer
    assert normalizer.may_split_chars("<木>") and normalizer.may_split_chars("è")  # E6 and C3, as '東' and 'é'
    assert not any(normalizer.may_split_chars(text) for text in ("<東> is east", "<é>", "a", "京"))


SPLIT_ALPHABET = "<>東木京éèüa b\ufffd🙂😀▁"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=SPLIT_ALPHABET, max_size=24))
def test_the_byte_path_agrees_with_the_str_path_wherever_nothing_is_split(t5_cjk, text):
    by_bytes = t5_cjk._encode_split_chars(text)
    assert all(0 <= start <= end <= len(text) for _, start, end in by_bytes)
    try:
        t5_cjk.normalizer.normalize_bytes(text.encode())[0].decode("utf-8")
    except UnicodeDecodeError:
        assert t5_cjk.normalizer.may_split_chars(text)  # the cheap check catches every split
        return
    t5_cjk._split_risk = False  # the str path alone
    try:
        by_str = t5_cjk._encode_segment(text, None)
    finally:
        t5_cjk._split_risk = True
    assert by_bytes == by_str
