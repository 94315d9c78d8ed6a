"""A t5 GGUF as llama.cpp's converter writes a real T5 (a precompiled charsmap, and the
``<extra_id_N>`` sentinels as user-defined tokens): llama.cpp's normaliser copies text that walks
down the user-defined tokens' trie as it is, a whole token or not, so ``<e`` + U+0301 is not
composed there. The expected ids are llama.cpp's (llama-cpp-python 0.3.36, llama.cpp 0c1e5709)
for the file this test writes; labkit refused such files before."""
from __future__ import annotations

import hashlib

import pytest

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
    base = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    sentinels = [f"<extra_id_{i}>" for i in range(12)]
    path = write_vocab_gguf(tmp_path_factory.mktemp("t5") / "t5-like.gguf", "t5", [*base.tokens, *sentinels],
                            [*base.token_types, *[4] * 12], arch="t5", pre="default", scores=[*base.scores, *[-1000.0] * 12],
                            charsmap=bytes(base.normalizer["charsmap"]), ids={"unknown": 0, "bos": 1, "eos": 2},
                            flags={"add_space_prefix": True, "remove_extra_whitespaces": True})
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256
    return labkit.load(path, engine="labkit")


@pytest.mark.parametrize("text,ids", LLAMA_CPP_IDS)
def test_a_t5_gguf_with_sentinels_and_a_charsmap_is_llama_cpps(t5_like, text, ids):
    assert t5_like.encode(text, parse_special=False).ids == ids


def test_the_partial_match_is_what_makes_it_exact(t5_like, monkeypatch):
    # walking only whole tokens (sentencepiece's rule) composes '<e' + U+0301 and differs from llama.cpp
    monkeypatch.setattr(SpmNormalizer, "_user_path_bytes", lambda self, data, pos: 0)
    differ = [text for text, ids in LLAMA_CPP_IDS if t5_like.encode(text, parse_special=False).ids != ids]
    assert len(differ) == 3 and "<e\u0301" in differ


def test_a_non_ascii_user_defined_token_is_still_refused(tmp_path):
    base = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    path = write_vocab_gguf(tmp_path / "t5-cjk.gguf", "t5", [*base.tokens, "<東>"], [*base.token_types, 4], arch="t5",
                            pre="default", scores=[*base.scores, -1000.0], ids={"unknown": 0})
    with pytest.raises(labkit.LabkitError, match="partial trie match"):
        labkit.load(path, engine="labkit")
