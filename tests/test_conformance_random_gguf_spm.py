"""SentencePiece-style GGUF files (tokenizer.ggml.model "llama") as llama.cpp serves them: 120
random files against llama.cpp's stored answers (labkit.conformance.random_gguf_spm), and one
small file per rule with llama.cpp's own answer."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import labkit
from support import random_gguf as random_gguf_answers
from support.llama_cpp import llama_cpp_ids as ids
from labkit.algorithms import llama_spm
from labkit.conformance import random_gguf as rg
from labkit.conformance import random_gguf_spm as rgs
from labkit.engines.hf import convert_model_file


@pytest.fixture(scope="module")
def reference():
    return random_gguf_answers.reference("spm")


@pytest.fixture(scope="module")
def outcomes():
    return random_gguf_answers.outcomes("spm")


def test_labkit_gives_llama_cpps_answers_or_refuses_what_it_cannot_load(outcomes, reference):
    counts = Counter(r["labkit"].split(":")[0] for r in outcomes.values())
    assert counts["differs"] == 0, {s: r["labkit"] for s, r in outcomes.items() if r["labkit"].startswith("differs")}
    for seed, results in outcomes.items():
        if "refused" in reference[seed]:
            assert results["labkit"].startswith("refused") and "Phi-3" in results["labkit"], seed
        elif results["labkit"] != "exact":
            assert "hash map's order" in results["labkit"], (seed, results["labkit"])
    assert counts["exact"] >= 100, counts


@pytest.mark.parametrize("engine", ["hf", "sentencepiece", "tiktoken"])
def test_reference_engines_give_llama_cpps_answers_or_refuse_at_load(outcomes, reference, engine):
    results = {seed: r[engine] for seed, r in outcomes.items()}
    assert {s: r for s, r in results.items() if r.startswith("differs")} == {}
    if engine == "hf":  # tokenizers' loop is not llama.cpp's (0 exact / 84 refused / 36 differ before)
        assert all(r.startswith("refused") for r in results.values()), results
    if engine == "sentencepiece":
        assert sum(r == "exact" for r in results.values()) >= 10, results  # served where its loop is llama.cpp's
        assert all("engine='labkit'" in r for s, r in results.items()
                   if r.startswith("refused") and "refused" not in reference[s] and "hash map's order" not in r), results


def test_the_sentencepiece_check_can_fail(reference, tmp_path, monkeypatch):
    # without the GGUF checks, sentencepiece gives <unk> where llama.cpp spells bytes, merges otherwise ...
    from labkit.engines import sentencepiece_engine

    monkeypatch.setattr(sentencepiece_engine, "gguf_differs", lambda vocab: None)
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("sentencepiece",), family="spm")["sentencepiece"]
               for seed in range(4, 10)]
    assert sum(r.startswith("differs") for r in results) >= 3, results


def test_the_draws_and_answers_cover_every_rule(reference):
    served = [reference[s] for s in rgs.SEEDS if "refused" not in reference[s]]
    answers = [a for e in served for a in e["plain"]]
    assert 0 < answers.count(rg.ABORT) < len(answers) // 2  # llama.cpp ends its process on some texts
    for mode in ("special", "bos_plain", "bos_special", "skip"):
        assert any(x is not None for e in served for x in e[mode]), mode
    drawn = [rgs.draw_file(s) for s in rgs.SEEDS]
    assert {k for d in drawn for k in d.types} == {1, 2, 3, 4, 5, 6}
    assert {f for d in drawn for f in d.flags} == set(rgs.FLAGS)
    assert {d.how.split(", bytes ")[1] for d in drawn} == {"all", "none", "some", "typed normal"}


def test_the_check_can_fail(reference, tmp_path, monkeypatch):
    # one symbol per character (no merge at all) is not llama.cpp's loop; the ids and the offsets paths both read it
    monkeypatch.setattr(llama_spm.LlamaSpm, "symbols", lambda self, text: list(text))
    results = [rg.check_seed(seed, reference[seed], tmp_path, engines=("labkit",), family="spm")["labkit"]
               for seed in range(0, 10)]
    assert any(r.startswith("differs") for r in results)


# ----------------------------------------------------------------------------- one rule, one file

HEAD = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]


def toy(folder: Path, seed: int, rows, **flags) -> labkit.Tokenizer:
    """A "llama" GGUF of <unk> <s> </s> then ``rows`` (spelling, score, type), served by labkit."""
    tokens, scores, types = (list(column) for column in zip(*HEAD, *rows))
    return labkit.load(rgs.write_file(rgs.DrawnSpmGguf(seed, tokens, scores, types, flags), folder), engine="labkit")




# each expected value is what llama.cpp (llama-cpp-python 0.3.36, llama.cpp 0c1e5709) gave for the same file
def test_every_token_is_a_merge_result_whatever_its_type(tmp_path):
    rows = [("a", -1.0, 1), ("b", -2.0, 1), ("c", -3.0, 1), ("ab", -4.0, 5), ("abc", -5.0, 1), ("<", -6.0, 1),
            ("s", -7.0, 1), ("<s", -8.0, 1), (">", -9.0, 1), ("▁", -10.0, 1)]
    tok = toy(tmp_path, 0, rows, add_space_prefix=False)
    assert ids(tok, "abc") == [7] and ids(tok, "abab") == [6, 6]  # the unused 'ab' stays, as an id
    assert ids(tok, "<s>") == [1] and ids(tok, "<s>abc") == [1, 7]  # the control <s> made of '<s' + '>'
    assert ids(tok, " ab c") == [12, 6, 12, 5] and ids(tok, "") == []
    assert ids(tok, "abc", add=True) == [1, 7] and ids(tok, "", add=True) == [1]
    assert [tok.decode(x) for x in ([4, 5], [1, 4], [7])] == ["bc", "<s>b", "abc"]
    assert tok.decode([1, 4], skip_special_tokens=True) == "b"


def test_bytes_by_spelling_no_unknown_and_no_whitespace_rules(tmp_path):
    rows = [("▁", -1.0, 1), ("a", -2.0, 1), ("<0xC3>", 0.0, 1), ("<0xA9>", 0.0, 6), ("q", -3.0, 1)]
    tok = toy(tmp_path, 1, rows, remove_extra_whitespaces=True)
    assert ids(tok, "aé") == [3, 4, 5, 6]  # '<0xC3>' is found by its spelling although typed normal
    assert ids(tok, "a  a ") == [3, 4, 3, 3, 4, 3]  # remove_extra_whitespaces is not read
    assert ids(tok, "x") == "abort"  # no token, no byte token: llama.cpp ends its process
    assert ids(tok, "aq\u00e9", add=True) == [1, 3, 4, 7, 5, 6]
    assert tok.decode([1, 3, 5, 6]) == "<s> <0xC3>\ufffd"
    assert tok.decode([1, 3, 5, 6], skip_special_tokens=True) == " <0xC3>\ufffd"  # the hidden <s> took the strip
    assert [tok.decode(x) for x in ([5, 4], [6], [3, 4, 6, 6])] == ["<0xC3>a", "\ufffd", "a\ufffd\ufffd"]


def test_tied_scores_merge_leftmost_and_the_header_defaults(tmp_path):
    rows = [("a", 0.0, 1), ("b", 0.0, 1), ("c", 0.0, 1), ("ab", 0.0, 1), ("bc", 0.0, 1)]
    tok = toy(tmp_path, 2, rows, add_space_prefix=False, add_eos_token=True)
    assert ids(tok, "abc") == [6, 5] and ids(tok, "abcabc") == [6, 5, 6, 5]
    assert ids(tok, "a b") == "abort"  # no '▁' token
    # no bos/eos ids in the header: llama.cpp's defaults 1 and 2
    assert ids(tok, "abc", add=True) == [1, 6, 5, 2] and ids(tok, "", add=True) == [1, 2]
    assert (tok.decode([0, 3]), tok.decode([0, 3], skip_special_tokens=True)) == ("<unk>a", "a")


# llama-spm id lists and llama_detokenize's text with unparse_special on (and off, where it differs)
LLAMA_SPM_DECODES = [
    ([1, 15043], ('<s> Hello', ' Hello')),
    ([1, 15043, 2], ('<s> Hello</s>', ' Hello')),
    ([29871, 15043], ' Hello'),
    ([0, 29871, 3186], ('<unk>  world', '  world')),
    ([198, 172], 'é'),
    ([230, 132], '�'),
    ([243, 162, 29871, 155], '� �'),
    ([2, 1, 0], ('</s><s><unk>', '')),
    ([12937, 2373, 3084, 32, 7035, 225], 'itut patvalid\x1d secret�'),
    ([49, 1936, 4056, 20664, 31054, 206, 116], '. particmingmittel에�q'),
    ([4363], '///'),
    ([259, 160, 22347, 99, 35], ' � financi` '),
    ([16266], 'texttt'),
    ([15256, 14849, 130, 22904, 2682, 17209, 2], ('морDU\x7f Diamát denen</s>', 'морDU\x7f Diamát denen')),
    ([40, 217, 178, 253, 0, 18776, 26815, 182], ('%֯�<unk> Dog descent�', '%֯� Dog descent�')),
    ([14948, 50, 15535, 2129, 161, 22322, 9325, 29066], "ientos/ftenases�]['ografíaclub"),
    ([239, 62, 1, 4238, 13038, 257], ('�;<s>owie Фи�', '�;owie Фи�')),
    ([208, 1], ('�<s>', '�')),
    ([9123, 11756, 12466, 4945, 80, 122, 96], 'Action anderen SovTERMw]'),
    ([77, 2, 10440, 22626, 31136], ('J</s> encoreFootnote도', 'J encoreFootnote도')),
    ([259], ' '),
    ([204, 208, 37, 14438, 177, 3354, 80], '��"Fr� шM'),
    ([20110, 109], 'internationalej'),
    ([132, 19735, 65, 252, 15269, 2, 55], ('� розта>�ssh</s>4', '� розта>�ssh4')),
    ([15683, 5290, 1, 17309, 16, 9767], ('localhost Ear<s> dicembre\rкова', 'localhost Ear dicembre\rкова')),
    ([8556, 1], ('nous<s>', 'nous')),
    ([17451, 259, 117, 25834, 27938, 125], 'esper  r shapes Такжеz'),
    ([7429, 255, 17, 25890, 135, 179, 2], ('desired�\x0e fitted��</s>', 'desired�\x0e fitted��')),
    ([55, 103, 250, 29501, 62, 2], ('4d� similarity;</s>', '4d� similarity;')),
    ([3929, 25634], 'PoFIX'),
    ([1, 2, 205, 0], ('<s></s>�<unk>', '�')),
    ([68, 241, 4789], 'A�Rec'),
    ([11482, 70, 55, 1, 1, 6915, 111, 126], ('défC4<s><s>connectl{', 'défC4connectl{')),
    ([217, 1995, 11592, 21707, 29631, 259], '�mathbb securelogger amerik  '),
    ([259, 29871, 19941], '   Left'),
    ([4908], 'British'),
    ([64, 10681, 17390], '=erie Erz'),
    ([3476, 1861, 144, 53, 259, 35, 259, 19861], 'cis Joh�2      conscious'),
    ([14822, 29871, 1, 28722], ('("# <s> tricky', '("#  tricky')),
    ([29253, 27525, 29871, 229, 126], 'Françamaxim �{'),
]


@pytest.mark.parametrize("engine", ["labkit", "sentencepiece"])
@pytest.mark.parametrize("ids_, want", LLAMA_SPM_DECODES)
def test_llama_spm_decodes_as_llama_cpp(ids_, want, engine):
    keep, skip = want if isinstance(want, tuple) else (want, want)
    tok = labkit.load("llama-spm", engine=engine)
    assert (tok.decode(ids_), tok.decode(ids_, skip_special_tokens=True)) == (keep, skip)


def test_hf_refuses_every_llama_gguf_as_tokenizers_reads_them_otherwise(tmp_path):
    # llama.cpp gives [1] for '<s>' as text on this file; tokenizers' merges from the scores never make the control '<s>'
    rows = [("<", -6.0, 1), ("s", -7.0, 1), ("<s", -8.0, 1), (">", -9.0, 1)]
    path = rgs.write_file(rgs.DrawnSpmGguf(10, [t for t, _, _ in HEAD + rows], [s for _, s, _ in HEAD + rows],
                                           [k for _, _, k in HEAD + rows], {"add_space_prefix": False}), tmp_path)
    for source in (path, "llama-spm"):
        with pytest.raises(labkit.LabkitError, match='hf engine does not serve a GGUF "llama"'):
            labkit.load(source, engine="hf")
    assert labkit.load(path, engine="labkit").encode("<s>", parse_special=False).ids == [1]
    assert convert_model_file(path).encode("<s>", parse_special=False).ids != [1]
    # llama-spm: llama.cpp's answer for <0x8E> < <0x15> . <0xE2>; ByteFallback makes the whole run U+FFFD
    ids_ = [145, 63, 24, 49, 229]
    assert labkit.load("llama-spm", engine="labkit").decode(ids_) == "\ufffd<\x15.\ufffd"
    assert convert_model_file("llama-spm").decode(ids_) == "\ufffd" * 5


def test_sentencepiece_loop_stands_in_only_where_it_merges_as_llama_cpps():
    """Where no token but the normal ones can be made by joining two symbols, the chunked
    sentencepiece loop gives llama.cpp's loop's symbols (28 of the stored seeds take it too)."""
    import random

    from labkit.algorithms.llama_spm import loops_agree

    tok = labkit.load("llama-spm", engine="labkit")
    assert tok.llama.fast_merge is not None
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyz▁ABCéü中文0123456789.,<>s/"
    for _ in range(400):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))
        assert tok.llama.fast_merge(word) == tok.llama._merged(word), word
    long_word = "".join(rng.choice("abcdefghij") for _ in range(20_000))  # several chunks
    assert tok.llama.fast_merge(long_word) == tok.llama._merged(long_word)
    # a control token two symbols join into ('<s' + '>'): only llama.cpp's loop makes it; with
    # '<', 's' and no '<s', no two symbols ever spell '<s>'
    assert not loops_agree(["<s", ">", "<s>"], [1, 1, 3])
    assert loops_agree(["<", "s", "<s>"], [1, 1, 3]) and loops_agree(["a", "b", "ab", "<unk>"], [1, 1, 1, 2])
    assert not loops_agree(["a", "b", "ab", "[x]"], [1, 1, 1, 4])  # a user-defined token


def test_a_repeated_spelling_is_named_even_in_a_large_vocabulary():
    """The sentencepiece engine refuses a llama GGUF where one spelling is two tokens, naming the
    first one repeated; the check is one pass (it counted every token, quadratic: 6 s at 32,000)."""
    import dataclasses

    from labkit.engines.sentencepiece_engine import gguf_differs
    from labkit.formats.gguf import read_gguf
    from labkit.paths import bundled_path

    vocab = read_gguf(bundled_path("llama-spm"))
    tokens = list(vocab.tokens) + [f"▁extra{i}" for i in range(200_000)] + ["▁extra7", "▁the"]
    kinds = list(vocab.token_types) + [1] * (len(tokens) - len(vocab.tokens))
    scores = list(vocab.scores) + [-1e9] * (len(tokens) - len(vocab.tokens))
    bigger = dataclasses.replace(vocab, tokens=tokens, token_types=kinds, scores=scores)
    assert "the spelling '▁extra7' is two tokens" in gguf_differs(bigger)
