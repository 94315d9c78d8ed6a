"""Random tokenizer.json configurations (labkit/conformance/random_hf.py) and the differences
they found between labkit's own engine and ``tokenizers``, one regression test per root cause.

Each regression builds a small tokenizer.json over a base vocabulary of the matrix, opens it
with labkit's engine and with ``tokenizers`` directly, and compares ids, tokens (by spelling),
offsets, with and without special tokens, and decode with and without skipping them.
"""
from __future__ import annotations

import json
import re
import time

import pytest

import labkit
from labkit.conformance.hf_json_configs import (HFReference, added, build_json, byte_level, metaspace, node,
                                                replace, split, template)
from labkit.conformance.random_hf import random_hf_case, random_texts, run_seeds
from labkit.core import EngineUnavailable


def _write(tmp_path, text: str):
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    return path


def _differences(path, texts, engine: str = "PipelineTokenizer") -> list[str]:
    """Every way labkit's engine (of class ``engine``) answers differently from tokenizers on ``texts``."""
    tok = labkit.load(path, engine="labkit")
    assert type(tok).__name__ == engine
    reference = HFReference(path)
    found = []
    for text in texts:
        for add in (False, True):
            want = reference.encode(text, add)
            enc = tok.encode(text, add_special_tokens=add)
            got = (enc.ids, enc.tokens, [tuple(o) for o in enc.offsets])
            if got != want:
                found.append(f"{text!r} add_special_tokens={add}: {got} != {want}")
        ids = reference.encode(text, True)[0]
        for skip in (False, True):
            got_text, want_text = tok.decode(ids, skip_special_tokens=skip), reference.decode(ids, skip)
            if got_text != want_text:
                found.append(f"{text!r} decode(skip={skip}): {got_text!r} != {want_text!r}")
    return found


# ----------------------------------------------------------------------------- root causes


def test_ctc_decoder_removes_the_pad_inside_tokens(tmp_path):
    # labkit dropped only tokens equal to the pad and always turned the delimiter into a space;
    # tokenizers removes the pad wherever it occurs and replaces the delimiter only with cleanup
    # (random seed 0: "G u t en b er g" where tokenizers gives "G u t n b r g" with pad_token "e")
    texts = ["But our maid Kiyo, who had been with us", "the teacher | said"]
    for cleanup in (True, False):
        decoder = node("CTC", pad_token="e", word_delimiter_token="|", cleanup=cleanup)
        path = _write(tmp_path, build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit"), decoder=decoder))
        assert _differences(path, texts) == []


def test_offset_trimming_reads_the_added_tokens_matched_text(tmp_path):
    # RobertaProcessing/ByteLevel trim_offsets trim the token strings tokenizers holds; for an
    # added token that is the text it matched, with the spaces lstrip/rstrip absorbed. labkit
    # trimmed its spelling: 'x 12 y' gave (1, 4) for "12" (lstrip) where tokenizers gives (2, 4)
    tokens = [added("12", lstrip=True), added("<R>", rstrip=True)]
    texts = ["x 12 y", "x <R>  y", "12 <R> 12", " 12"]
    ids = {e["content"]: e["id"] for e in json.loads(build_json("wordlevel", added_tokens=tokens))["added_tokens"]}
    roberta = node("RobertaProcessing", sep=["</s>", ids["</s>"]], cls=["<s>", ids["<s>"]], trim_offsets=True,
                   add_prefix_space=False)
    for post in (roberta, byte_level(trim_offsets=True)):
        path = _write(tmp_path, build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit"), post_processor=post,
                                           added_tokens=tokens))
        assert _differences(path, texts) == []


def test_rstrip_spaces_do_not_hide_the_next_match(tmp_path):
    # tokenizers searches added tokens on the text as it is: a match may start inside the spaces
    # the previous one's rstrip absorbed (the two pieces then overlap). labkit searched on from the
    # stripped end: ' x  x ' with " x " (rstrip) gave [' x ', '▁', 'x', '▁'] where tokenizers gives [' x ', ' x ']
    path = _write(tmp_path, build_json("meta", pre_tokenizer=metaspace(), decoder=metaspace(),
                                       added_tokens=[added(" x ", special=False, rstrip=True)]))
    assert _differences(path, [" x  x ", " x x x ", "a x  x  b"]) == []


_BERT_PARTS = dict(normalizer=node("BertNormalizer", clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                   lowercase=False),
                   pre_tokenizer=node("BertPreTokenizer"), decoder=node("WordPiece", prefix="##", cleanup=True))


@pytest.mark.parametrize("base,parts,engine", [("byte", dict(pre_tokenizer=byte_level(), decoder=byte_level()), "ByteLevelBPE"),
                                               ("wordpiece", _BERT_PARTS, "WordPieceTokenizer")])
def test_family_engines_match_added_tokens_as_tokenizers(tmp_path, base, parts, engine):
    # labkit's family engines (AddedTokenSplitter) searched on from the end of the spaces rstrip
    # absorbed, and after a single_word token rejected inside a word from the next character:
    # on 'x<ab>' with '<ab>' (single_word) and 'b>', the byte-level engine gave [x, <, a, b>] where
    # tokenizers, whose automaton moves past the rejected match, gives [x, <, a, b, >]; ' x x' with
    # ' x' (rstrip) gave [' x', 'x'] where tokenizers gives [' x', ' x'] with offsets (0, 3), (2, 4)
    tokens = [added(" x", special=True, rstrip=True), added("<ab>", special=True, single_word=True), added("b>")]
    path = _write(tmp_path, build_json(base, added_tokens=tokens, **parts))
    tok = labkit.load(path, engine="labkit")
    assert type(tok).__name__ == engine
    reference = HFReference(path)
    for text in (" x x", " x  x", "a x x", "x<ab>", "x<ab> <ab>", "<ab>b>"):
        enc = tok.encode(text)
        assert (enc.ids, enc.tokens, [tuple(o) for o in enc.offsets]) == reference.encode(text, False), text


_BYTE_PARTS = dict(pre_tokenizer=byte_level(), decoder=byte_level())


def test_byte_level_engine_without_nfc_does_not_normalize(tmp_path):
    # a Qwen2-shaped Split without the NFC normaliser: labkit's byte-level engine took NFC from
    # its table entry for the Qwen2 regex, so '\u2000' became '\u2002' (random seed 104: ids
    # [158, 222, 224] where tokenizers gives [158, 222, 222])
    from labkit.conformance.hf_json_configs import QWEN2_SPLIT

    pre = {"type": "Sequence", "pretokenizers": [split(QWEN2_SPLIT, "Isolated"), byte_level(use_regex=False)]}
    path = _write(tmp_path, build_json("byte", pre_tokenizer=pre, decoder=byte_level()))
    assert _differences(path, ["\u2000", "\u212b x", "cafe\u0301 e\u0301"], engine="ByteLevelBPE") == []


@pytest.mark.parametrize("base,parts,engine", [("byte", _BYTE_PARTS, "ByteLevelBPE"),
                                               ("wordlevel", dict(pre_tokenizer=node("WhitespaceSplit")), "PipelineTokenizer")])
def test_an_added_token_clipped_to_nothing_is_dropped(tmp_path, base, parts, engine):
    # '\xa0' with lstrip and rstrip on '\xa0\xa0x': the second match's lstrip is clipped to where the
    # first one's rstrip ended, leaving an empty piece, which tokenizers drops; labkit gave
    # [401, 401, 87] where tokenizers gives [401, 87] (random seeds 31 and 196)
    path = _write(tmp_path, build_json(base, added_tokens=[added("\xa0", lstrip=True, rstrip=True)], **parts))
    assert _differences(path, ["\xa0\xa0x", "x\xa0\xa0\xa0y", "\xa0"], engine=engine) == []


def test_a_special_token_that_is_also_a_model_token_is_still_merged(tmp_path):
    # 'Ġthe' added as a special token keeps its model id; tokenizers' BPE still merges ' the' into
    # it, labkit's byte-level engine left it out of its merge table: 'let the house' gave
    # ['Ġ', 't', 'h', 'e'] where tokenizers gives ['Ġthe'] (random seed 126)
    path = _write(tmp_path, build_json("byte", added_tokens=[added("Ġthe")], **_BYTE_PARTS))
    assert json.loads(path.read_text())["added_tokens"][-1]["id"] < 400  # a model id
    assert _differences(path, ["let the house", "the theme", "Ġthe"], engine="ByteLevelBPE") == []


def test_wordpiece_engine_does_not_look_up_added_only_tokens(tmp_path):
    # an added token outside model.vocab is not a WordPiece piece in tokenizers; labkit's WordPiece
    # engine looked it up like one: '▁THE' (lowercased to '▁the') gave the added '▁the' where
    # tokenizers gives [UNK] (random seed 276)
    parts = dict(_BERT_PARTS, normalizer=node("BertNormalizer", clean_text=True, handle_chinese_chars=True,
                                              strip_accents=None, lowercase=True))  # "▁THE" is looked up as "▁the"
    path = _write(tmp_path, build_json("wordpiece", added_tokens=[added("▁the", special=False, normalized=False),
                                                                   added("qqq", special=False, normalized=False)],
                                       **parts))
    assert _differences(path, ["▁THE", "▁the x", "QQQ qqq"], engine="WordPieceTokenizer") == []


@pytest.mark.parametrize("base,parts,engine", [("byte", _BYTE_PARTS, "ByteLevelBPE"),
                                               ("wordpiece", _BERT_PARTS, "WordPieceTokenizer")])
def test_template_eos_has_offsets_zero(tmp_path, base, parts, engine):
    # TemplateProcessing gives the tokens it adds (0, 0); labkit's family engines gave an EOS
    # (len, len): '$A [CLS]' gave (18, 18) where tokenizers gives (0, 0) (random seeds 35, 113)
    doc = json.loads(build_json(base, added_tokens=[added("</s>")], **parts))
    index = doc["added_tokens"][-1]["id"]
    doc["post_processor"] = template("$A </s>", "$A </s> $B </s>", {"</s>": index})
    path = _write(tmp_path, json.dumps(doc))
    assert _differences(path, ["hello world", "x"], engine=engine) == []


@pytest.mark.parametrize("base,parts,post", [
    ("byte", _BYTE_PARTS, "two-before"),       # random seed 19: the family engine added neither token
    ("wordpiece", _BERT_PARTS, "two-before"),
    ("wordpiece", _BERT_PARTS, "trim"),        # a WordPiece engine that trimmed nothing
])
def test_framing_the_family_engines_cannot_add_goes_to_the_pipeline_engine(tmp_path, base, parts, post):
    doc = json.loads(build_json(base, added_tokens=[added("<a>"), added("<b>")], **parts))
    ids = {e["content"]: e["id"] for e in doc["added_tokens"]}
    if post == "trim":
        doc["post_processor"] = byte_level(trim_offsets=True)
    else:
        doc["post_processor"] = template("<a> <b> $A", "<a> $A $B", {"<a>": ids["<a>"], "<b>": ids["<b>"]})
    path = _write(tmp_path, json.dumps(doc))
    assert _differences(path, ["hello world", " x  y ", "<a> x"]) == []


def test_byte_level_engine_aligns_nfc_as_tokenizers(tmp_path):
    # NFC reorders the marks of 'Ġ\u0327\u0323' (to 'Ģ\u0323\u0307'); tokenizers aligns the two
    # marks to (2, 3), labkit's byte-level engine gave (1, 2) and (2, 3) (random seeds 703, 852)
    path = _write(tmp_path, build_json("byte", normalizer=node("NFC"), **_BYTE_PARTS))
    texts = ["\u0120\u0327\u0323", "x\u00e8\u0327\u0323 y", "U\u0122\u0323\u0323\u0307\u0301\u0308of"]
    assert _differences(path, texts, engine="ByteLevelBPE") == []


def test_normalized_added_tokens_are_matched_after_the_others(tmp_path):
    # tokenizers matches the normalized=false tokens on the text first and the normalized ones
    # only in what is left; labkit's family engines matched all in one pass: on '</s>\na\tb' with
    # '</s>' (normalized, rstrip) and 'a\tb' (not normalized, lstrip), '</s>' took the '\n'
    # ((0, 5) where tokenizers gives (0, 4), random seed 728). (The WordPiece engine serves no
    # normalized token behind its normaliser: only the byte-level engine meets this.)
    tokens = [added("</s>", special=False, normalized=True, lstrip=True, rstrip=True),
              added("a\tb", special=True, lstrip=True, rstrip=True)]
    path = _write(tmp_path, build_json("byte", added_tokens=tokens, **_BYTE_PARTS))
    assert _differences(path, ["</s>\na\tb", "x </s> a\tb </s>"], engine="ByteLevelBPE") == []


def test_added_only_tokens_are_not_bpe_results(tmp_path):
    # with ignore_merges labkit's byte-level engine looked a whole word up among the added tokens
    # too: 'wasworld' with 'was' (added, not in model.vocab) gave ['was', ...] where tokenizers'
    # BPE, which does not know the added token, gives ['w', 'as', ...] (random seed 752)
    path = _write(tmp_path, build_json("byte", model={"ignore_merges": True}, added_tokens=[
        added("was", special=False, normalized=False, single_word=True), added("world", special=False)], **_BYTE_PARTS))
    assert json.loads(path.read_text())["added_tokens"][0]["id"] >= 400  # not a model token
    assert _differences(path, ["wasworld", "was world", "it was"], engine="ByteLevelBPE") == []


def test_byte_level_decode_of_an_added_token_outside_the_byte_alphabet(tmp_path):
    # tokenizers' ByteLevel decoder keeps a token whole as UTF-8 when any of its chars is not in
    # the byte alphabet; labkit mapped the others char by char: '<s> naïve' (the space is not in
    # the alphabet) decoded to '<s> na\ufffdve' where tokenizers gives '<s> naïve' (random seed 1166)
    path = _write(tmp_path, build_json("byte", added_tokens=[added("<s> naïve"), added("ĠHi <x>", special=False)],
                                       **_BYTE_PARTS))
    assert _differences(path, ["x <s> naïve y", "ĠHi <x>"], engine="ByteLevelBPE") == []


def test_added_tokens_normalized_alike_are_refused(tmp_path):
    # 'a b' and '[X]' both normalize to 'XYXY': tokenizers keeps its normalized added tokens in a
    # hash map and matches either one, changing from one load to the next (random seeds 788, 1080:
    # 40 loads of seed 1080 gave three different answers); labkit's engine refuses the file
    tokens = [added("Hello", special=False), added("hello", special=False)]
    path = _write(tmp_path, build_json("wordlevel", normalizer=node("Lowercase"), pre_tokenizer=node("WhitespaceSplit"),
                                       added_tokens=tokens))
    with pytest.raises(EngineUnavailable, match="added tokens 'Hello' and 'hello' both normalize to 'hello'"):
        labkit.load(path, engine="labkit")
    assert labkit.load(path).engine == "hf"


def test_the_generator_skips_what_tokenizers_answers_at_random(tmp_path):
    # such a seed has no answer to hold labkit to (tokenizers' own changes from load to load)
    import tokenizers

    from labkit.conformance.random_hf import normalized_clash

    tokens = [added("Hello", special=False), added("hello", special=False), added("x", special=False, normalized=False)]
    path = _write(tmp_path, build_json("wordlevel", normalizer=node("Lowercase"), added_tokens=tokens))
    entries = json.loads(path.read_text())["added_tokens"]
    assert normalized_clash(tokenizers.Tokenizer.from_file(str(path)), entries) == "'Hello' and 'hello' both normalize to 'hello'"
    assert normalized_clash(tokenizers.Tokenizer.from_file(str(path)), entries[:-2]) is None


def test_an_added_token_normalized_to_nothing_is_refused(tmp_path):
    # '\xa0' (normalized) under Strip(right) normalises to '': tokenizers then matches an empty
    # pattern at a piece's start, which rstrip stretches over the space: ' d' gives ['\xa0', 'd']
    # there, labkit (which matches an empty spelling nowhere) gave ['d'] (random seed 2443)
    path = _write(tmp_path, build_json("wordlevel", normalizer=node("Strip", strip_left=False, strip_right=True),
                                       pre_tokenizer=node("WhitespaceSplit"),
                                       added_tokens=[added("\xa0", special=False, rstrip=True)]))
    index = json.loads(path.read_text())["added_tokens"][-1]["id"]
    assert HFReference(path).encode(" d", False)[0][0] == index  # what labkit does not reproduce
    with pytest.raises(EngineUnavailable, match=re.escape("added token '\\xa0' normalizes to an empty text")):
        labkit.load(path, engine="labkit")
    assert labkit.load(path).engine == "hf"


def test_replace_matching_empty_before_a_transforming_normalizer_is_refused(tmp_path):
    # Replace('a*') puts its content before the first character with a zero-width alignment;
    # tokenizers' next Strip/NFC/... then transforms only the range of the original text and shifts
    # it: ' b ' stripped right gives '  b' there; labkit gave ' b' (random seed 838)
    normalizer = {"type": "Sequence", "normalizers": [replace("a*", " ", regex=True), node("Strip", strip_left=False,
                                                                                           strip_right=True)]}
    path = _write(tmp_path, build_json("wordlevel", normalizer=normalizer, pre_tokenizer=split(".", "Isolated")))
    with pytest.raises(EngineUnavailable, match="normalizer Replace 'a\\*' can match the empty string and Strip follows it"):
        labkit.load(path, engine="labkit")
    assert labkit.load(path).engine == "hf"
    # nor before a ByteLevel pre-tokenizer, whose byte mapping is such a transform: 'd' with
    # Replace('\s*', '\u0301') gave two <unk> for the leading mark where tokenizers gives three
    # (random seed 4868)
    path = _write(tmp_path, build_json("plain", normalizer=replace(r"\s*", "\u0301", regex=True),
                                       pre_tokenizer=byte_level()))
    with pytest.raises(EngineUnavailable, match="can match the empty string and pre_tokenizer ByteLevel follows it"):
        labkit.load(path, engine="labkit")
    assert labkit.load(path).engine == "hf"
    # without a transforming normaliser or ByteLevel after it, the same Replace is served exactly
    path = _write(tmp_path, build_json("wordlevel", normalizer=replace("a*", " ", regex=True),
                                       pre_tokenizer=split(".", "Isolated")))
    assert _differences(path, [" ", "b", "ab a", "x\ny"]) == []


@pytest.mark.parametrize("pattern", [r"\s*", "a*", "x|", "^", "$", "^ ", " $", ""])
def test_replace_normalizer_matches_as_oniguruma(tmp_path, pattern):
    # empty matches: labkit skipped them (and Python's iterator also yields an empty match right
    # after a match, Oniguruma's does not); ^ and $ are line anchors in Oniguruma; an empty String
    # pattern matches everywhere there. Random seeds 187 ("a*"), 48 (" $"), 170 ("^ ") found it.
    texts = ["ab a b", "x\n y \nz\n", "\u2009\nteacher", " aa  ", "a", "\n", "x y"]
    regex = pattern != ""
    path = _write(tmp_path, build_json("wordlevel", normalizer=replace(pattern, "_", regex=regex),
                                       pre_tokenizer=node("WhitespaceSplit")))
    assert _differences(path, texts) == []


@pytest.mark.parametrize("pattern,behavior,regex", [(r"\s*", "MergedWithNext", True), (" $", "Removed", True),
                                                    ("^x", "Isolated", True), ("", "MergedWithPrevious", False)])
def test_split_matches_as_oniguruma(tmp_path, pattern, behavior, regex):
    # the same iterator decides where a Split cuts
    path = _write(tmp_path, build_json("wordlevel", pre_tokenizer=split(pattern, behavior, regex=regex)))
    assert _differences(path, ["the  teacher said", " x", "a \nb", "x\nxy \n"]) == []


def test_replace_decoder_matches_as_oniguruma(tmp_path):
    # an empty token has no match in tokenizers (labkit put the content there); empty matches as above
    decoder = {"type": "Sequence", "decoders": [replace("e*", "_", regex=True), node("Fuse")]}
    path = _write(tmp_path, build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit"), decoder=decoder))
    assert _differences(path, ["the teacher said", "see"]) == []


@pytest.mark.parametrize("pattern,why", [
    (r"\h+", r"escape \h"),            # a hexadecimal digit in Oniguruma, no escape in `regex`
    (r"x[\b]", r"\b in the class"),     # a backspace there (\w \W \b \B are served: tests/test_onig_word.py)
    (r"(?i)ss", "case-insensitive"),   # 'ß' folds to 'ss' there
    (r"(?i)[a-z]+", "case-insensitive"),  # Oniguruma's i does not match 'İ'
    ("[[:alpha:]]+", "POSIX"),
    (r".\z", r"escape \z"),
])
def test_regex_oniguruma_reads_otherwise_is_refused(tmp_path, pattern, why):
    # labkit's `regex` finds other matches than tokenizers' Oniguruma for these: refused at load,
    # naming the component; engine=None serves them with tokenizers
    path = _write(tmp_path, build_json("wordlevel", pre_tokenizer=split(pattern, "Isolated")))
    with pytest.raises(EngineUnavailable, match=f"pre_tokenizer Split regex .*{re.escape(why)}"):
        labkit.load(path, engine="labkit")
    assert labkit.load(path).engine == "hf"
    # the same patterns as a Replace normaliser
    path = _write(tmp_path, build_json("wordlevel", normalizer=replace(pattern, "_", regex=True),
                                       pre_tokenizer=node("WhitespaceSplit")))
    with pytest.raises(EngineUnavailable, match="normalizer Replace regex"):
        labkit.load(path, engine="labkit")


def test_refused_patterns_really_differ():
    # the refusal list is not a guess: on these strings tokenizers and labkit's regex disagree
    from tokenizers import Regex, normalizers

    from labkit.algorithms.hf_normalize import Piece
    from labkit.algorithms.hf_normalize import replace as labkit_replace

    for pattern, text in ((r"(?i)ss", "\u00df"), (r"(?i)i", "\u0130")):
        want = normalizers.Replace(Regex(pattern), "_").normalize_str(text)
        assert labkit_replace(Piece.of(text), {"Regex": pattern}, "_").text != want, pattern
    # the word escapes, refused until labkit spelled Oniguruma's word characters for `regex`, now agree
    for pattern, text in ((r"\w", "a\u00b2\u200c"), (r"\b", "a\u00b2 b\u200d"), (r"[^\w]", "a\u00b2")):
        want = normalizers.Replace(Regex(pattern), "_").normalize_str(text)
        assert labkit_replace(Piece.of(text), {"Regex": pattern}, "_").text == want, pattern


def test_qwen2_split_is_still_served():
    # the scoped (?i:'s|'t|...) of the Qwen2/Llama 3 regexes is plain ASCII: not refused
    from labkit.algorithms.hf_normalize import regex_difference
    from labkit.conformance.hf_json_configs import GPT2_SPLIT, QWEN2_SPLIT

    assert regex_difference(QWEN2_SPLIT) is None and regex_difference(GPT2_SPLIT) is None


# ----------------------------------------------------------------------------- the generator


def test_a_seed_is_one_configuration():
    assert random_hf_case(11).extra["json"] == random_hf_case(11).extra["json"]
    assert random_hf_case(11).extra["json"] != random_hf_case(12).extra["json"]
    assert random_texts(3, ["<s>"]) == random_texts(3, ["<s>"])


def test_seeds_cover_the_components():
    kinds = set()
    for seed in range(150):
        for kind, label in random_hf_case(seed).components:
            kinds.add(label.split()[0])
    for wanted in ("NFKC", "BertNormalizer", "Precompiled", "Replace", "Prepend", "StripAccents", "ByteLevel", "Split",
                   "Metaspace", "Punctuation", "Digits", "CharDelimiterSplit", "BertPreTokenizer", "UnicodeScripts",
                   "CTC", "ByteFallback", "Fuse", "TemplateProcessing", "RobertaProcessing", "BertProcessing",
                   "WordPiece", "Unigram", "WordLevel", "BPE", "lstrip", "rstrip", "single_word"):
        assert wanted in kinds, wanted


def test_a_slice_of_seeds_never_differs():
    started = time.perf_counter()
    results = run_seeds(range(150), botchan=5)
    differs = [r for r in results if r.status == "differs"]
    assert not differs, "\n\n".join(f"seed {r.seed}: {r.reason}" for r in differs)
    counts = {status: sum(r.status == status for r in results) for status in ("exact", "refused", "skipped")}
    assert counts["exact"] >= 100 and counts["exact"] + counts["refused"] >= 140, counts
    # every exact seed met the corpus (a drawn WordLevel without unk leaves the strings it raises on)
    assert all(max(c.strings for c in r.cells) + r.dropped_texts >= 50 for r in results if r.status == "exact")
    # the family engines are held to tokenizers too, not only the component-by-component one
    served = {r.served_by for r in results if r.status == "exact"}
    assert {"PipelineTokenizer", "ByteLevelBPE", "WordPieceTokenizer"} <= served, served
    print(counts, f"{time.perf_counter() - started:.1f} s")


# ----------------------------------------------------------------------------- drawn vocabularies


def _with_merges(base: str, edit, **parts) -> str:
    """``base``'s tokenizer.json with ``edit(model)`` applied to its model (vocab and merges)."""
    doc = json.loads(build_json(base, **parts))
    edit(doc["model"])
    return json.dumps(doc, ensure_ascii=False)


@pytest.mark.parametrize("base,parts,engine", [("byte", _BYTE_PARTS, "ByteLevelBPE"),
                                               ("plain", dict(pre_tokenizer=node("WhitespaceSplit")), "PipelineTokenizer")])
def test_a_merge_listed_twice_takes_its_last_rank(tmp_path, base, parts, engine):
    # tokenizers collects the merges into a map, so a merge listed again at the end ranks last;
    # labkit kept the first rank: with merges (b c), (a b), (b c) 'abc' gave ['a', 'bc'] where
    # tokenizers gives ['ab', 'c'] (found by drawn vocabularies with duplicate merges)
    def repeat_first_merges(model):
        model["merges"] += model["merges"][:30]

    path = _write(tmp_path, _with_merges(base, repeat_first_merges, **parts))
    texts = ["the teacher said that", "I was in the school " * 3, "thethethe" * 40]
    assert _differences(path, texts, engine=engine) == []


def test_a_byte_without_token_takes_no_room_in_the_offsets(tmp_path):
    # tokenizers' BPE drops a byte with no token and places each later token at the end of the
    # one before: the tokens after it shift left. labkit's byte-level engine gave the bytes'
    # own chars: '\u200b\u200bx' without a token for 0x80 gave (1, 2) for the second 'â'
    # where tokenizers gives (0, 1) (random seed 113). The room is counted in the UTF-8 bytes of
    # the byte-level text: 'ﾀas' (EF BE 80) gave (1, 2) for 's' where tokenizers gives (0, 1)
    from labkit.algorithms.bytes_unicode import bytes_to_unicode

    symbol = bytes_to_unicode()[0x80]

    def drop_byte_0x80(model):
        model["vocab"].pop(symbol)
        model["merges"] = [m for m in model["merges"] if symbol not in "".join(m)]

    path = _write(tmp_path, _with_merges("byte", drop_byte_0x80, **_BYTE_PARTS))
    texts = ["\u200b\u200bx", "a\u200bb\u200b\u200b c", "\u0100\u0100 x\u0100y", "\uff80as", "\u0100\uff80abc\u200b!"]
    assert _differences(path, texts, engine="ByteLevelBPE") == []


@pytest.mark.parametrize("base,parts,engine", [("byte", _BYTE_PARTS, "ByteLevelBPE"),
                                               ("wordpiece", _BERT_PARTS, "WordPieceTokenizer"),
                                               ("plain", dict(pre_tokenizer=node("WhitespaceSplit")), "PipelineTokenizer")])
def test_parse_special_false_skips_a_special_match_as_tokenizers(tmp_path, base, parts, engine):
    # with encode_special_tokens tokenizers still finds a special token (leftmost-longest) and
    # leaves it as text, so a user token overlapping it is not found; labkit's family engines
    # searched without the specials: 'xyzw' with special 'xyz' and user token 'yzw' gave
    # ['x', 'yzw'] where tokenizers gives ['x', '##y', '##z', '##w'] (WordPiece)
    tokens = [added("xyz"), added("yzw", special=False, normalized=False), added("<|im_end|>"),
              added("m_e", special=False, normalized=False), added("abcd"), added("bc", special=False, normalized=False, lstrip=True)]
    path = _write(tmp_path, build_json(base, added_tokens=tokens, **parts))
    tok, reference = labkit.load(path, engine="labkit"), HFReference(path)
    assert type(tok).__name__ == engine
    for text in ["xyzw yzw", "a<|im_end|>b m_e", "x abcd  bc", "xyz"]:
        for add in (False, True):
            enc = tok.encode(text, add_special_tokens=add, parse_special=False)
            assert (enc.ids, enc.tokens, [tuple(o) for o in enc.offsets]) == reference.encode_unparsed(text, add), text


def test_a_continuation_merge_drops_the_prefix_bytes_whatever_they_are(tmp_path):
    # with continuing_subword_prefix '##' tokenizers names a merge's result left + right[2:] in
    # bytes, whether the right part starts with '##' or not; labkit refused the file: merge
    # ('本', '\u0323') "uses '本\u0323', which is not in the vocabulary", where tokenizers loads it
    # (the result is '本') and serves it (random seeds 166, 927 and 18 more with drawn vocabularies)
    def odd_merges(model):
        vocab = model["vocab"]
        for token in ("\u0323", "xyhe", "本", "the"):
            vocab.setdefault(token, len(vocab))
        model["merges"] += [["本", "\u0323"], ["t", "xyhe"]]

    path = _write(tmp_path, _with_merges("prefix", odd_merges, pre_tokenizer=node("WhitespaceSplit")))
    assert _differences(path, ["本\u0323 the xyhe", "thethe 本本 txyhe"]) == []


def test_seeds_draw_vocabularies_and_long_words():
    from labkit.engines.labkit_bpe_byte import LONG_WORD_BYTES

    cases = [random_hf_case(seed) for seed in range(40)]
    drawn = [case.extra["base"].endswith("(drawn)") for case in cases]
    assert 10 <= sum(drawn) <= 30  # about half: the trained bases stay in use
    models = {json.loads(case.extra["json"])["model"]["type"] for case, d in zip(cases, drawn) if d}
    assert models == {"BPE", "WordPiece", "Unigram", "WordLevel"}, models
    # every seed has words long enough for the byte-level engine's bucket path
    assert all(sum(len(t.encode("utf-8")) > LONG_WORD_BYTES and not any(c.isspace() for c in t)
                   for t in case.texts) >= 3 for case in cases)
    assert max(len(t) for case in cases for t in case.texts) > 1000


def test_run_case_holds_parse_special_false_to_tokenizers(tmp_path, monkeypatch):
    # an engine that parsed special tokens whatever parse_special says must be caught
    from labkit.conformance.hf_json_configs import json_case
    from labkit.conformance.runner import run_case
    from labkit.engines.labkit_pipeline import PipelineTokenizer

    case = json_case("hf/parse-special", "hf", build_json("wordlevel", pre_tokenizer=node("WhitespaceSplit")))
    assert [c.status for c in run_case(case, tmp_path, ("labkit",), ["I<s> x"])] == ["exact"]
    always_parsed = PipelineTokenizer._encode
    monkeypatch.setattr(PipelineTokenizer, "_encode", lambda self, text, add, parse: always_parsed(self, text, add, True))
    cell, = run_case(case, tmp_path, ("labkit",), ["I<s> x"])
    assert cell.status == "differs" and "parse_special=False" in cell.message


def test_the_tiktoken_engine_on_drawn_tokenizer_json_is_exact_or_refused():
    """labkit's tiktoken engine on a tokenizer.json, seeds where it differed: 852 and 1402 (NFC
    offsets where marks are reordered: now tokenizers' own alignment), 1409 (a merges list that
    does not make every token tiktoken can join: tiktoken merged what the list never joins; now refused)."""
    results = run_seeds([852, 1402, 1409], engines=("tiktoken",), botchan=5)
    assert [r.status for r in results] == ["exact", "exact", "refused"], [(r.seed, r.reason) for r in results]
    assert "tiktoken would join tokens the merges never make" in results[-1].reason


def test_the_tiktoken_engine_without_nfc_does_not_normalize(tmp_path):
    # random seed 284: a Qwen2-shaped Split without the NFC normaliser; the tiktoken engine took
    # NFC from the split's table entry: '\u2000' gave [226, 128, 130] where tokenizers gives [226, 128, 128]
    from labkit.conformance.hf_json_configs import QWEN2_SPLIT

    pre = {"type": "Sequence", "pretokenizers": [split(QWEN2_SPLIT, "Isolated"), byte_level(use_regex=False)]}
    path = _write(tmp_path, build_json("byte", pre_tokenizer=pre, decoder=byte_level()))
    tok, reference = labkit.load(path, engine="tiktoken"), HFReference(path)
    for text in ["\u2000", "\u212b x", "cafe\u0301 e\u0301"]:
        assert tok.encode(text).ids == reference.encode(text, False)[0], text



def test_the_tiktoken_engine_refuses_a_special_token_overlapping_another_added_token(tmp_path):
    tokens = [added("xyz"), added("yzw", special=False, normalized=False)]
    path = _write(tmp_path, build_json("byte", added_tokens=tokens, **_BYTE_PARTS))
    with pytest.raises(EngineUnavailable, match="'xyz' \\(special\\) and 'yzw' overlap"):
        labkit.load(path, engine="tiktoken")
    assert labkit.load(path, engine=None).engine == "labkit"  # served exactly by labkit's own engine
