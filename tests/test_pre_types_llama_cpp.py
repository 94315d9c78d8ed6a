"""Every split name llama.cpp 0c1e5709 knows, against llama.cpp's own answers
(data/gguf/pre_types_llama_cpp.json, made by tools/make_pre_type_refs.py): on a vocabulary
whose merges cross every place a split might cut, each engine gives llama.cpp's ids on every
probe text but the documented ones, and the names labkit does not reproduce are refused."""
from __future__ import annotations

import hashlib

import pytest

import labkit
from labkit.paths import data_path
from labkit.algorithms.llama_bpe_utf8 import UTF8_BPE_RULES
from labkit.algorithms.pretokenize import LLAMA_CPP_UNSERVED, get_pre_tokenizer
from labkit.conformance.gguf_pretypes import LLAMA_CPP_PRE_NAMES
from labkit.conformance.pre_probe import (
    CASE_CLASS_PRE_TYPES,
    CUSTOM_REFERENCE,
    CUSTOM_SPLIT_NAMES,
    custom_split_texts,
    differing_texts,
    documented,
    load_reference,
    probe_texts,
    write_probe_gguf,
)

REFERENCE = load_reference()
SERVED = sorted(name for name, entry in REFERENCE["names"].items()
                if "digests" in entry and name not in LLAMA_CPP_UNSERVED and name not in UTF8_BPE_RULES)


def test_the_stored_answers_are_for_these_texts_and_files(tmp_path):
    assert REFERENCE["texts"] == probe_texts()
    for name in ("qwen2", "deepseek-v3"):  # the probe vocabulary and the GGUF writer are what llama.cpp read
        path = write_probe_gguf(name, tmp_path, REFERENCE["texts"])
        assert hashlib.sha256(path.read_bytes()).hexdigest() == REFERENCE["names"][name]["sha256"]


def test_every_name_llama_cpp_knows_is_served_or_refused_with_a_reason():
    assert set(REFERENCE["names"]) == set(LLAMA_CPP_PRE_NAMES) | set(LLAMA_CPP_UNSERVED) | set(UTF8_BPE_RULES)
    assert set(LLAMA_CPP_PRE_NAMES).isdisjoint(LLAMA_CPP_UNSERVED)
    assert set(LLAMA_CPP_PRE_NAMES).isdisjoint(UTF8_BPE_RULES)


@pytest.mark.parametrize("name", sorted(UTF8_BPE_RULES))
def test_a_utf8_bpe_name_is_labkits_utf8_engine_and_no_byte_level_split(name, tmp_path):
    """llama.cpp reads these names as BPE over raw UTF-8, even on this byte-level probe
    vocabulary: labkit's UTF-8 engine gives its ids on every probe text (or, where llama.cpp
    ended its process on the file, refuses a text as it does), the hf engine refuses the file."""
    with pytest.raises(labkit.LabkitError, match="BPE over raw UTF-8"):
        labkit.load(write_probe_gguf(name, tmp_path, REFERENCE["texts"][:1]), engine="hf")
    entry = REFERENCE["names"][name]
    if "digests" in entry:
        assert differing_texts(name, REFERENCE, tmp_path, "labkit") == []
        return
    assert entry["crashed"] == "exit status -6"  # GGML_ASSERT: a merge half holding a space (find_bpe_rank)
    tok = labkit.load(write_probe_gguf(name, tmp_path, REFERENCE["texts"]), engine="labkit")
    with pytest.raises(labkit.LabkitError, match="llama.cpp ends its process"):
        for text in REFERENCE["texts"]:
            tok.encode(text, parse_special=False)


@pytest.mark.parametrize("engine", ["labkit", "hf"])
@pytest.mark.parametrize("name", SERVED)
def test_ids_equal_llama_cpps_but_where_documented(name, engine, tmp_path):
    if engine == "hf" and get_pre_tokenizer(name).custom_steps:
        # llama.cpp's digit grouping function (afmoe, tiny_aya): labkit runs it, tokenizers cannot
        with pytest.raises(labkit.LabkitError, match="llama.cpp's own function"):
            labkit.load(write_probe_gguf(name, tmp_path, REFERENCE["texts"][:1]), engine="hf")
        return
    differ = differing_texts(name, REFERENCE, tmp_path, engine)
    assert [t for t in differ if not documented(name, t)] == []
    if name in CASE_CLASS_PRE_TYPES:
        assert differ  # the documented difference is real on this probe (about 100 of 261 texts)


CUSTOM = load_reference(data_path(CUSTOM_REFERENCE))


def test_the_custom_split_answers_are_for_these_texts_and_files(tmp_path):
    assert CUSTOM["texts"] == custom_split_texts() and sorted(CUSTOM["names"]) == sorted(CUSTOM_SPLIT_NAMES)
    for name in CUSTOM_SPLIT_NAMES:
        path = write_probe_gguf(name, tmp_path, CUSTOM["texts"])
        assert hashlib.sha256(path.read_bytes()).hexdigest() == CUSTOM["names"][name]["sha256"]


@pytest.mark.parametrize("name", CUSTOM_SPLIT_NAMES)
def test_the_splits_llama_cpp_runs_as_its_own_code_equal_it_on_random_texts(name, tmp_path):
    """afmoe, tiny_aya and cohere2moe group digits with a function of llama.cpp's own, kimi-k2 is
    split by a hand-written scanner: 1,500 random texts of the cases that code tells apart, on a
    vocabulary trained on them, give llama.cpp's ids (the hf engine serves kimi-k2 only)."""
    engines = ("labkit", "hf") if name == "kimi-k2" else ("labkit",)
    for engine in engines:
        assert differing_texts(name, CUSTOM, tmp_path, engine) == [], (name, engine)
