"""WordPiece GGUF files (tokenizer.ggml.model "bert") as llama.cpp serves them: 100 random files
against llama.cpp's stored answers (labkit.conformance.random_gguf_wpm), one small file per rule
with llama.cpp's own answer, and the bert-bge vectors decoded as llama.cpp decodes them."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import labkit
from support import random_gguf as random_gguf_answers
from labkit.algorithms import llama_wpm
from labkit.conformance import random_gguf as rg
from labkit.conformance import random_gguf_wpm as rgw
from labkit.vectors import load_vectors


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("wpm")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("wpm")


def test_labkit_gives_llama_cpps_answers_or_refuses(outcomes):
    counts = Counter(r["labkit"].split(":")[0] for r in outcomes.values())
    assert counts["differs"] == 0, {s: r["labkit"] for s, r in outcomes.items() if r["labkit"].startswith("differs")}
    refusals = [r["labkit"] for r in outcomes.values() if r["labkit"].startswith("refused")]
    assert all("no unknown token" in r or "hash map's order" in r for r in refusals), refusals
    assert counts["exact"] >= 80, counts


@pytest.mark.parametrize("engine", ["hf", "sentencepiece", "tiktoken"])
def test_reference_engines_refuse_every_bert_gguf(outcomes, engine):
    assert all(r[engine].startswith("refused") for r in outcomes.values())


def test_the_draws_and_answers_cover_every_rule(reference):
    served = [reference[s] for s in rgw.SEEDS if "refused" not in reference[s]]
    for mode in ("special", "bos_plain", "skip"):
        assert any(x is not None for e in served for x in e[mode]), mode
    assert any(x == rg.ABORT for e in served for x in e["bos_plain"])  # no BOS id: llama.cpp ends its process
    drawn = [rgw.draw_file(s) for s in rgw.SEEDS]
    assert {k for d in drawn for k in d.types} == {1, 2, 3, 4, 5}
    assert {f for d in drawn for f in d.flags} == set(rgw.FLAGS)
    assert {d.how for d in drawn} == {"bert ids", "specials first"}


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # BERT's normaliser (tokenizers) is not llama.cpp's: without its lowercase map the texts differ
    monkeypatch.setattr(llama_wpm, "to_lower", lambda cpt: cpt)
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",), family="wpm")["labkit"]
               for seed in range(0, 10)]
    assert any(r.startswith("differs") for r in results)


# ----------------------------------------------------------------------------- one rule, one file

SPECIALS = [("[PAD]", 3), ("[UNK]", 3), ("[CLS]", 3), ("[SEP]", 3), ("[MASK]", 3)]


def toy(folder: Path, seed: int, rows, flags=None, ids=None) -> labkit.Tokenizer:
    """A "bert" GGUF of ``rows`` (llama.cpp's spelling, type), served by labkit."""
    tokens, types = (list(column) for column in zip(*rows))
    return labkit.load(rgw.write_file(rgw.DrawnWpmGguf(seed, tokens, types, flags or {}, ids or {}), folder),
                       engine="labkit")


def encoded(tok: labkit.Tokenizer, text: str, add: bool = False, parse: bool = False) -> list[int] | str:
    try:
        return tok.encode(text, add_special_tokens=add, parse_special=parse).ids
    except labkit.LabkitError as exc:
        assert "llama.cpp" in str(exc)
        return "abort"


# each expected value is what llama.cpp (llama-cpp-python 0.3.36, llama.cpp 0c1e5709) gave for the same file
def test_words_match_the_files_spellings_with_its_case_and_no_length_limit(tmp_path):
    rows = SPECIALS + [("▁A", 1), ("▁a", 1), ("b", 1), ("▁ab", 3), ("▁", 1), ("c", 1), ("'", 1), ("▁'", 1),
                       ("▁s", 1), ("s", 1), ("▁,", 1), ("▁x", 1), ("x", 1), ("▁ᄋ", 1), ("▁e", 1)]
    tok = toy(tmp_path, 0, rows, {"normalizer.lowercase": False},
              {"unknown": 1, "bos": 2, "seperator": 3, "padding": 0, "mask": 4})
    assert encoded(tok, "Ab ab") == [5, 7, 8]  # case kept; the control '▁ab' is a word piece like any
    assert encoded(tok, "a ab b") == [6, 8, 9, 7]  # 'b' as a word: '▁' then 'b'
    assert encoded(tok, "é") == [1]  # strip_accents follows lowercase: off
    assert encoded(tok, "x" * 121) == [16] + [17] * 120  # no 100-character limit
    assert encoded(tok, "[CLS]ab") == [1, 1, 1, 8] and encoded(tok, "[CLS]ab", parse=True) == [2, 8]
    assert encoded(tok, "Ab ab", add=True) == [2, 5, 7, 8, 3]
    assert tok.decode([5, 7, 10, 11, 12]) == " Abc' '"
    assert (tok.decode([2, 6, 7, 9, 11]), tok.decode([2, 6, 7, 9, 11], skip_special_tokens=True)) == ("[CLS] ab '", " ab '")
    assert tok.decode([17, 15, 16]) == "x, x"


def test_llama_cpps_normalisation_defaults_and_clean_spaces(tmp_path):
    rows = SPECIALS + [("▁a", 1), ("b", 1), ("▁e", 1), ("▁ᄋ", 1), ("▁x", 1), ("x", 1), ("▁'", 1), ("▁s", 1),
                       ("▁,", 1), ("▁.", 1)]
    tok = toy(tmp_path, 1, rows, ids={"unknown": 1, "seperator": 3, "cls": 4})
    assert encoded(tok, "Ab É") == [5, 6, 7]  # lowercase and strip_accents on by default
    assert encoded(tok, "안녕") == [1]  # its "NFD" keeps a syllable's first jamo: 'ᄋᄂ', unmatched
    assert encoded(tok, "a , b") == [5, 13, 1] and encoded(tok, "a\u200bb") == [5, 6]
    assert encoded(tok, "a", add=True) == "abort"  # no BOS id (101 is outside): llama.cpp asserts
    assert [tok.decode(x) for x in ([5, 11, 12], [12, 13, 14], [2, 5, 3])] == [" a's", " s,.", "[CLS] a[SEP]"]
    assert tok.decode([2, 5, 3], skip_special_tokens=True) == " a"


def test_files_llama_cpp_cannot_serve_are_refused(tmp_path):
    # no unknown id: llama.cpp gives -1 for an unmatched word ("zz" -> -1)
    with pytest.raises(labkit.LabkitError, match="no unknown token"):
        toy(tmp_path, 2, [("[PAD]", 3), ("[UNK]", 3), ("▁a", 1)])
    # a byte-typed token: llama.cpp's load ends its process
    with pytest.raises(labkit.LabkitError, match="typed byte"):
        toy(tmp_path, 3, [("[PAD]", 3), ("[UNK]", 3), ("▁a", 1), ("<0x41>", 6)], ids={"unknown": 1})


# llama_detokenize of each bert-bge vector's ids (unparse_special on)
BERT_BGE_DECODES = [
    ' ied 4 ½ months',
    ' apfel',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    ' hello world',
    ' hello world',
    ' hello world',
    ' hello world',
    ' hello world!',
    ' hello, world!',
    ' hello, world!',
    ' this is[UNK]. cpp',
    ' w048 7tuijk dsdfhu',
    ' нещо на български',
    '[UNK]',
    '[UNK] ( normal )[UNK] ( multiple emojis concatenated )[UNK] ( only emoji that has its own token )',
    ' hello',
    ' hello',
    ' hello',
    ' hello',
    ' hello',
    ' hello hello',
    ' (',
    ' =',
    "'era",
    " hello, y'all! how are you[UNK]? 我[UNK][UNK] apple[UNK][UNK] 1314151 天 ～",
    '!!!!!!',
    ' 3',
    ' 33',
    ' 333',
    ' 3333',
    ' 33333',
    ' 333333',
    ' 3333333',
    ' 33333333',
    ' 333333333',
    ' cua viet',
    ' discards',
    '[UNK] ( normal )[UNK] ( multiple emojis concatenated )[UNK][UNK] 3 33 333 3333 33333 333333 3333333 33333333 3. 3 3.. 3 3... 3[UNK]? 我[UNK][UNK] apple[UNK][UNK] 1314151 天 ～ - - - - - - = = = = = = = нещо на български\'\'\'\'\'\' ` ` ` ` ` ` ` " " " "......!!!!!!?????? i\'ve been\'told he\'s there,\'re you sure?\'m not sure i\'ll make it,\'d you like some tea? we\'ve a\'ll',
]


def test_bert_bge_vectors_encode_and_decode_as_llama_cpp():
    tok = labkit.load("bert-bge", engine="labkit")
    vectors = load_vectors("bert-bge")
    assert len(vectors) == len(BERT_BGE_DECODES) == 46
    for (text, ids), decoded in zip(vectors, BERT_BGE_DECODES):
        assert tok.encode(text, parse_special=False).ids == ids
        assert tok.decode(ids) == decoded
