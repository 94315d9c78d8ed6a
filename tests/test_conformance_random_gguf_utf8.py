"""GGUF files of BPE over raw UTF-8 (Gemma 4's kind, and the "whitespace" tokenizer model) as
llama.cpp serves them: 150 random files
against llama.cpp's stored answers (labkit.conformance.random_gguf_utf8), and one small file
per rule with llama.cpp's own answer."""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest

import labkit
from support import random_gguf as random_gguf_answers
from support.llama_cpp import llama_cpp_ids as ids
from labkit.algorithms import llama_bpe_utf8, llama_wpm
from labkit.algorithms.llama_spm import byte_of as llama_spm_byte
from labkit.conformance import random_gguf as rg
from labkit.conformance import random_gguf_utf8 as rgu
from labkit.paths import data_path
from labkit.streaming.decode_stream import DecodeStream

TOY_TOKENS = ["<pad>", "<bos>", "<eos>", "\n", "\n\n", "▁", "a", "b", "▁a", "ab", "▁ab", ",", "<0xC3>", "<0xA9>", "<0x0A>"]
TOY_TYPES = [3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6, 6, 6]
TOY_MERGES = ["▁ a", "a b", "▁a b"]


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("utf8")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("utf8")


def test_labkit_gives_llama_cpps_answers_or_refuses_what_llama_cpp_cannot_load(outcomes, reference):
    counts = Counter(r["labkit"].split(":")[0] for r in outcomes.values())
    assert counts["differs"] == 0, {s: r["labkit"] for s, r in outcomes.items() if r["labkit"].startswith("differs")}
    for seed, results in outcomes.items():
        if "refused" in reference[seed]:  # a byte token shorter than '<0x', or no merges
            assert results["labkit"].startswith("refused"), seed
        else:
            assert results["labkit"] == "exact", (seed, results["labkit"])
    assert counts["exact"] >= 140, counts


@pytest.mark.parametrize("engine", ["hf", "sentencepiece", "tiktoken"])
def test_reference_engines_refuse_every_utf8_bpe_gguf(outcomes, engine):
    results = {seed: r[engine] for seed, r in outcomes.items()}
    assert all(r.startswith("refused") for r in results.values()), results
    if engine == "hf":
        assert all("BPE over raw UTF-8" in r and "engine='labkit'" in r for r in results.values()), results


def test_the_draws_and_answers_cover_every_rule(reference):
    served = [reference[s] for s in rgu.SEEDS if "refused" not in reference[s]]
    answers = [a for e in served for a in e["plain"]]
    assert 0 < answers.count(rg.ABORT) < len(answers) // 4  # a space beside other characters ("whitespace")
    for mode in ("special", "bos_plain", "bos_special", "skip"):
        assert any(x is not None for e in served for x in e[mode]), mode
    drawn = [rgu.draw_file(s) for s in rgu.SEEDS]
    assert {d.pre for d in drawn if d.model == "gpt2"} == set(llama_bpe_utf8.UTF8_BPE_RULES)
    assert sum(d.model == "gemma4" for d in drawn) >= 20 and sum(d.model == "whitespace" for d in drawn) >= 20
    assert {k for d in drawn for k in d.types} == {1, 2, 3, 4, 5, 6}
    assert {f for d in drawn for f in d.flags} == set(rgu.FLAGS)
    assert {d.how.split(", bytes ")[1] for d in drawn} == {"all", "none", "some", "typed normal"}


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # one part per character (no merge at all) is not llama.cpp's loop
    monkeypatch.setattr(llama_bpe_utf8, "merge_word", lambda word, ranks: list(word))
    monkeypatch.setattr("labkit.engines.labkit_llama_bpe_utf8.merge_word", lambda word, ranks: list(word))
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",), family="utf8")["labkit"]
               for seed in range(0, 10)]
    assert sum(r.startswith("differs") for r in results) >= 5, results


# ----------------------------------------------------------------------------- one rule, one file
# each expected value is what llama.cpp (llama-cpp-python 0.3.36, llama.cpp 0c1e5709) gave for the same file


def toy(folder, seed: int, model: str, pre: str | None, tokens, types, merges, flags=None, header=None):
    drawn = rgu.DrawnUtf8Gguf(seed, model, pre, list(tokens), list(types), list(merges), flags or {}, header or {})
    return labkit.load(rgu.write_file(drawn, folder), engine="labkit")


def test_gemma4_takes_newline_runs_whole_adds_bos_and_cleans_spaces(tmp_path):
    tok = toy(tmp_path, 0, "gpt2", "gemma4", TOY_TOKENS, TOY_TYPES, TOY_MERGES, header={"bos": 1, "eos": 2})
    assert ids(tok, "ab ab") == [9, 10] and ids(tok, "ab ab", add=True) == [1, 9, 10]  # BOS though no flag says so
    assert ids(tok, "a\n\nab\n\n\nb") == [6, 4, 9, 3, 3, 3, 7]  # '\n\n' is a token, '\n\n\n' is not: its chars
    assert ids(tok, "é, a") == [12, 13, 11, 8] and ids(tok, "x") == [] and ids(tok, " ab") == [10]
    assert tok.decode([1, 10, 11, 8]) == "<bos> ab, a" and tok.decode([1, 10, 11, 8], skip_special_tokens=True) == " ab, a"
    assert tok.decode([10, 11, 5, 11]) == " ab,,"  # clean_spaces: no space before ','
    assert tok.decode([12, 13, 5, 14]) == "é \n" and tok.decode([12, 5, 6]) == "\ufffd a" and tok.decode([5, 8]) == "  a"


def test_sarvam_has_neither_gemma4_rule_nor_clean_spaces(tmp_path):
    tok = toy(tmp_path, 1, "gpt2", "sarvam-moe", TOY_TOKENS, TOY_TYPES, TOY_MERGES, {"add_space_prefix": True},
              {"bos": 1, "eos": 2})
    assert ids(tok, "ab ab") == [9, 10] and ids(tok, "ab ab", add=True) == [9, 10]
    assert ids(tok, "a\n\nab\n\n\nb") == [6, 3, 3, 9, 3, 3, 3, 7]
    assert tok.decode([10, 11, 5, 11]) == "ab, ," and tok.decode([5, 8]) == " a"  # add_space_prefix: one space less


def test_a_gemma4_model_reads_the_gemma4_split_and_has_no_default_ids(tmp_path):
    tok = toy(tmp_path, 2, "gemma4", "qwen2", ["▁", "a", "b", "ab", "▁ab", "<0x62>"], [1] * 5 + [6], ["a b", "▁ ab"])
    assert ids(tok, "ab ab") == [3, 4] and ids(tok, "b a") == [2, 0, 1]
    assert ids(tok, "ab", add=True) == "abort"  # BOS forced, no BOS id: llama.cpp's assertion ends the process


def test_whitespace_splits_at_llama_cpps_spaces_and_decodes_byte_level(tmp_path):
    tok = toy(tmp_path, 3, "gpt2", "whitespace", ["a", "b", "ab", " ", "\u3000", "\t", "Ġa", "c"], [1] * 8, ["a b"])
    assert ids(tok, "ab\u3000ab") == [2, 4, 2] and ids(tok, "a b") == [0, 3, 1]
    assert ids(tok, "a\tb\u200bc") == [0, 5, 1, 7]  # U+200B is no space to llama.cpp: no token, no byte token, dropped
    assert ids(tok, "ab\u3000 ab") == "abort"  # a space beside another character in a merge half
    assert tok.decode([6, 3, 2]) == " a[UNK_BYTE_0x20 ]ab" and tok.decode([4, 0]) == "[UNK_BYTE_0xe38080\u3000]a"


@pytest.mark.parametrize("lowercase", [True, False])
def test_the_whitespace_model_drops_llama_cpps_spaces_and_lowercases_where_the_file_says(tmp_path, lowercase):
    tokens = ["[UNK]", "a", "b", "ab", "é", "É", "c", "ĠA", "<0x41>"]
    flags = {"normalizer.lowercase": True} if lowercase else {}
    tok = toy(tmp_path, 7, "whitespace", "whitespace", tokens, [2, 1, 1, 1, 1, 1, 1, 1, 6], ["a b"], flags, {"unknown": 0})
    # U+0085, U+00A0 and U+3000 are llama.cpp's spaces, U+200B is not (no token, no byte token: dropped)
    want = [3, 3, 4, 6, 1] if lowercase else [8, 3, 5, 6, 8]  # 'B' has no token and no byte token
    assert ids(tok, "AB ab\u3000É\u00a0c\u200bA") == want and ids(tok, "AB ab\u3000É\u00a0c\u200bA", add=True) == want
    assert ids(tok, "a\u0085b  \t ab") == [1, 2, 3]
    assert tok.decode([7, 3, 6, 0]) == " Aabc[UNK]" and tok.decode([7, 3, 6, 0], skip_special_tokens=True) == " Aabc"


def test_a_byte_token_shorter_than_its_spelling_is_refused_at_load(tmp_path):
    with pytest.raises(labkit.LabkitError, match="shorter than '<0x'"):
        toy(tmp_path, 4, "gpt2", "gemma4", ["a", "b", "ab"], [1, 6, 1], ["a b"])
    with pytest.raises(labkit.LabkitError, match="without tokenizer.ggml.merges"):
        toy(tmp_path, 5, "gpt2", "sarvam-moe", ["a", "b"], [1, 1], [])


def test_llama_2s_vocabulary_written_as_a_gemma4_gguf_gives_llama_cpps_answers(tmp_path):
    """A real vocabulary of 32,000 tokens and 61,249 merges: 898 texts with add_special and
    parse_special off and on, and 101 id lists decoded, each as llama.cpp answered."""
    stored = json.loads(data_path(rgu.REAL_REFERENCE).read_text(encoding="utf-8"))["seeds"][0]
    case = rgu.real_vocabulary_case(tmp_path)
    assert (case["sha256"], case["inputs_sha256"]) == (stored["sha256"], stored["inputs_sha256"])
    tok = labkit.load(case["path"], engine="labkit")
    assert type(tok).__name__ == "Utf8BPE"
    assert [rg.describe_difference(*d) for d in rg.differences(rg.engine_answers(tok, case), stored, case)] == []


def test_a_decode_stream_over_utf8_bpe_gives_decode_text(tmp_path):
    # clean_spaces rewrites the end of the text (a space before ','): the stream holds such an end
    tok = toy(tmp_path, 6, "gpt2", "gemma4", TOY_TOKENS, TOY_TYPES, TOY_MERGES, header={"bos": 1, "eos": 2})
    rng = random.Random(6)
    for _ in range(300):
        ids_ = [rng.randrange(tok.vocab_size) for _ in range(rng.randint(1, 10))]
        for skip in (False, True):
            stream = DecodeStream(tok, skip_special_tokens=skip)
            streamed = "".join(stream.step(i) or "" for i in ids_) + (stream.flush() or "")
            assert streamed == tok.decode(ids_, skip_special_tokens=skip), ids_


def test_a_split_that_the_tokenizer_model_does_not_run_is_refused(tmp_path):
    drawn = rgu.DrawnUtf8Gguf(9, "gemma4", None, ["a", "b", "ab"], [1, 1, 1], ["a b"])
    path = rgu.write_file(drawn, tmp_path)
    assert labkit.load(path).encode("ab").ids == [2]
    with pytest.raises(labkit.LabkitError, match="reads it with the gemma4 split"):
        labkit.load(path, pre="qwen2")  # llama.cpp sets the gemma4 split for this model whatever it is told
    drawn = rgu.DrawnUtf8Gguf(10, "whitespace", "gpt-2", ["a", "b", "ab"], [1, 1, 1], ["a b"])
    with pytest.raises(labkit.LabkitError, match="the 'whitespace' split its converter writes"):
        labkit.load(rgu.write_file(drawn, tmp_path))


def test_offsets_point_at_the_text_each_token_spells(tmp_path):
    # a token covers the characters it spells as the engine reads them (▁ for an escaped space,
    # lowercased for the whitespace model), a byte token the character its byte belongs to
    checked = 0
    for seed in range(40):
        drawn = rgu.draw_file(seed)
        try:
            tok = labkit.load(rgu.write_file(drawn, tmp_path), engine="labkit")
        except labkit.LabkitError:
            continue

        def as_read(covered: str) -> str:
            if tok.rules.escape_whitespaces:
                return covered.replace(" ", "▁")
            return "".join(chr(llama_wpm.to_lower(ord(c))) for c in covered) if tok.lowercase else covered

        for text in rgu.texts_for(drawn):
            try:
                encoding = tok.encode(text, parse_special=False)
            except labkit.LabkitError:
                continue  # where llama.cpp ends its process
            for token, (start, end) in zip(encoding.ids, encoding.offsets):
                spelling, covered = tok.vocab.tokens[token], text[start:end]
                if spelling == covered:  # an added token, or text as it is
                    pass
                elif token in tok.byte_ids:  # found by its <0xNN> spelling, whatever its type
                    assert len(covered) == 1 and llama_spm_byte(spelling) in as_read(covered).encode(), (seed, text)
                else:
                    assert spelling == as_read(covered), (seed, text, token)
                checked += 1
    assert checked > 5000
