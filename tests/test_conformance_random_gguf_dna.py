"""hybriddna GGUFs (byte-level BPE, DNA between <dna> and </dna> read as 6-mers) as llama.cpp
serves them: 150 random files against llama.cpp's stored answers
(labkit.conformance.random_gguf_dna), and the session's rules one at a time on a toy file.
Also the byte-level BOS rules those files measured first: a split after which llama.cpp adds
BOS when the file has no add_bos_token key, and the GLM splits that have no BOS id."""
from __future__ import annotations

from collections import Counter

import pytest

import labkit
from support import random_gguf as random_gguf_answers
from labkit.conformance import random_gguf as rg
from labkit.conformance import random_gguf_dna as rgd
from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.algorithms import dna_kmers as dna
from labkit.formats.gguf import ADDS_BOS_BY_DEFAULT, NO_DEFAULT_BOS


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("dna")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("dna")


def test_labkit_gives_llama_cpps_answers_on_every_file(outcomes):
    counts = Counter(r["labkit"].split(":")[0] for r in outcomes.values())
    assert counts == {"exact": len(rgd.SEEDS)}, {s: r["labkit"] for s, r in outcomes.items() if r["labkit"] != "exact"}


@pytest.mark.parametrize("engine", ["hf", "sentencepiece", "tiktoken"])
def test_reference_engines_refuse_every_hybriddna_gguf(outcomes, engine):
    results = {seed: r[engine] for seed, r in outcomes.items()}
    assert all(r.startswith("refused") for r in results.values()), results
    if engine != "sentencepiece":
        assert all("k-mers" in r and "engine='labkit'" in r for r in results.values()), results


def test_the_draws_and_answers_cover_every_rule(reference):
    drawn = [rgd.draw_file(s) for s in rgd.SEEDS]
    assert {d.how.split(",")[0] for d in drawn} == {"all tags", "missing <dna>", "missing </dna>", "missing <oov>"}
    assert any(not d.how.endswith(" 0 k-mers before <oov>") for d in drawn)  # k-mers that keep their suffix
    assert {k for d in drawn for t, k in zip(d.tokens, d.types) if t in (dna.DNA_OPEN, dna.DNA_CLOSE)} == {1, 3, 4}
    assert any("AéGTA" in d.kmers for d in drawn) and any(dna.KMER_MARKER in d.tokens for d in drawn)
    assert sum(d.pre in ADDS_BOS_BY_DEFAULT and "add_bos_token" not in d.flags for d in drawn) >= 5
    glm = [d for d in drawn if d.pre in NO_DEFAULT_BOS]
    assert any(d.flags.get("add_bos_token") for d in glm) and any(not d.flags.get("add_bos_token") for d in glm)
    answers = [a for e in reference.values() for a in e["bos_plain"] if a is not None]
    assert rg.ABORT in answers  # a GLM split told to add a BOS it has no id for: llama.cpp ends its process
    assert any(a.startswith("11 ") for a in answers)  # a BOS added by default


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # k-mers of five letters instead of six are not llama.cpp's
    monkeypatch.setattr(dna, "KMER_BYTES", 5)
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",), family="dna")["labkit"]
               for seed in range(0, 12)]
    assert sum(r.startswith("differs") for r in results) >= 5, results


# ----------------------------------------------------------------------------- the rules on a toy file
LETTERS = [*"ACGTNacgtnd<>/!é", " ", "nn"]  # one merge (n n): a GGUF without merges does not load


def toy(tmp_path, tag_types=(3, 3, 3), kmers=("ACGTAC", "GTAAAA", "AéGTA"), before=(), extra=(), flags=None, pre="gpt-2"):
    tags = [(t, k) for t, k in zip((dna.DNA_OPEN, dna.DNA_CLOSE, dna.DNA_OOV), tag_types) if k]
    rows = [(c, 1) for c in LETTERS] + [(k + dna.KMER_MARKER, 1) for k in before] + tags + list(extra)
    rows += [(k + dna.KMER_MARKER, 1) for k in kmers]
    tokens, types = [t for t, _ in rows], [k for _, k in rows]
    path = write_vocab_gguf(tmp_path / "toy-dna.gguf", "hybriddna", tokens, types, arch="llama", pre=pre, merges=["n n"],
                            flags=flags if flags is not None else {"add_bos_token": False})
    return labkit.load(str(path), engine="labkit"), tokens


def test_dna_between_tags_reads_as_upper_case_six_mers_padded_with_a(tmp_path):
    tok, tokens = toy(tmp_path)
    ids = tok.encode("a<dna>acgtacGT</dna>!", parse_special=False).ids
    assert [tokens[i] for i in ids] == ["a", "<dna>", "ACGTAC\ue000", "GTAAAA\ue000", "</dna>", "!"]
    # no k-mer token, or a cut through é's two bytes: <oov>
    ids = tok.encode("<dna>TTTTTTAé</dna>", parse_special=False).ids
    assert [tokens[i] for i in ids] == ["<dna>", "<oov>", "<oov>", "</dna>"]
    assert [tokens[i] for i in tok.encode("<dna>aégta", parse_special=False).ids] == ["<dna>", "AéGTA\ue000"]


def test_a_sequence_runs_to_the_end_without_a_close_tag_and_a_close_tag_alone_is_text(tmp_path):
    tok, tokens = toy(tmp_path)
    assert [tokens[i] for i in tok.encode("<dna>acgtac <", parse_special=False).ids] == ["<dna>", "ACGTAC\ue000", "<oov>"]
    ids = tok.encode("</dna>", parse_special=False).ids
    assert [tokens[i] for i in ids] == list("</dna>")
    assert [tokens[i] for i in tok.encode("<dna></dna>", parse_special=False).ids] == ["<dna>", "</dna>"]


def test_a_file_missing_one_tag_is_bpe_throughout(tmp_path):
    tok, tokens = toy(tmp_path, tag_types=(3, 3, 0))
    assert [tokens[i] for i in tok.encode("<dna>acgtac</dna>", parse_special=False).ids] == list("<dna>acgtac</dna>")


def test_with_parse_special_a_control_tag_is_a_token_and_what_follows_is_text(tmp_path):
    tok, tokens = toy(tmp_path)
    ids = tok.encode("<dna>acgtac</dna>", parse_special=True).ids
    assert [tokens[i] for i in ids] == ["<dna>", *"acgtac", "</dna>"]


def test_kmers_after_oov_decode_bare_and_those_before_it_keep_the_suffix(tmp_path):
    tok, tokens = toy(tmp_path, before=("TTTTTT",))
    after, before = tokens.index("ACGTAC\ue000"), tokens.index("TTTTTT\ue000")
    assert tok.decode([after]) == "ACGTAC"
    # llama_decode_text's marker for a character outside the byte alphabet (U+E000), as llama.cpp gave it on seed 89
    assert tok.decode([before]) == "TTTTTT[UNK_BYTE_0xee8080TTTTTT\ue000]"
    offsets = tok.encode("xx<dna>ACGTACg", parse_special=False).offsets
    assert offsets[-3:] == [(2, 7), (7, 13), (13, 14)]


def test_a_kmer_token_not_typed_normal_is_refused_at_load(tmp_path):
    with pytest.raises(labkit.LabkitError, match="typed 4, not normal"):
        toy(tmp_path, extra=[("CCCCCC" + dna.KMER_MARKER, 4)])


def test_a_bpe_split_over_raw_utf8_is_refused_with_hybriddna(tmp_path):
    with pytest.raises(labkit.LabkitError, match="hybriddna.*raw UTF-8"):
        toy(tmp_path, pre="gemma4")


@pytest.mark.parametrize("pre, flags, first", [("llama-bpe", {}, [11]), ("llama-bpe", {"add_bos_token": False}, []),
                                               ("gpt-2", {}, []), ("tekken", {}, [11])])
def test_a_split_may_add_bos_when_the_file_has_no_add_bos_key(tmp_path, pre, flags, first):
    # llama-vocab.cpp sets add_bos for the llama3 family, tekken and chameleon; the key overrides it
    tok, _ = toy(tmp_path, pre=pre, flags=flags)
    assert tok.encode("a", add_special_tokens=True, parse_special=False).ids[:-1] == first


def test_the_glm_splits_have_no_bos_id_unless_the_file_names_one(tmp_path):
    tok, _ = toy(tmp_path, pre="glm4", flags={"add_bos_token": True})
    assert tok.vocab.specials.bos_id is None
    with pytest.raises(labkit.LabkitError, match="llama.cpp"):
        tok.encode("a", add_special_tokens=True)


def test_offsets_agree_with_the_ids_and_each_kmer_spans_its_letters(tmp_path):
    # reading .offsets runs the spans pass, which raises if its ids are not the ids pass's
    checked = 0
    for seed in range(0, 40):
        drawn = rgd.draw_file(seed)
        tok = labkit.load(str(rgd.write_file(drawn, tmp_path)), engine="labkit")
        kmer_ids = {i for i, t in enumerate(drawn.tokens) if t.endswith(dna.KMER_MARKER) and t != dna.KMER_MARKER}
        for text in rgd.texts_for(drawn):
            for parse in (False, True):
                encoding = tok.encode(text, parse_special=parse)
                assert len(encoding.offsets) == len(encoding.ids)
                for token, (start, end) in zip(encoding.ids, encoding.offsets):
                    assert 0 <= start <= end <= len(text)
                    if token in kmer_ids:  # a k-mer spans the letters it reads (the filled-up A's excepted)
                        letters = text[start:end].encode().upper()
                        assert drawn.tokens[token].encode()[:len(letters)] == letters, (seed, text, token)
                        checked += 1
    assert checked > 100
