"""Random GPT-2 vocab.json + merges.txt and BERT vocab.txt files
(labkit.conformance.random_legacy): every engine gives tokenizers' own ids and text, or refuses
the files at load; the draws hold every irregularity; and the check can fail. Then one test
per root cause the fuzzer found, each against tokenizers called directly."""
from __future__ import annotations

import json
from collections import Counter

import pytest
import tokenizers
from tokenizers import decoders, models, pre_tokenizers

import labkit
from labkit.conformance import random_legacy as rl

SEEDS = range(0, 120)
FILES = ("vocab.json", "merges.txt", "vocab.txt")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("random_legacy")
    return {seed: rl.check_seed(seed, folder) for seed in SEEDS}


def test_no_engine_differs_from_tokenizers(outcomes):
    differing = {(seed, engine): result for seed, results in outcomes.items()
                 for engine, result in results.items() if result.startswith("differs")}
    assert differing == {}


def test_most_seeds_are_served_and_compared(outcomes):
    counts = Counter(result.split(":", 1)[0] for results in outcomes.values() for result in results.values())
    assert counts["exact"] >= len(SEEDS) and counts["exact"] + counts["refused"] == 2 * len(SEEDS)


def test_the_draws_cover_every_irregularity():
    drawn = [rl.draw_files(seed) for seed in SEEDS]
    assert {kind for d in drawn for kind in [d.kind]} == set(rl.KINDS)
    found = {name for d in drawn for name in d.irregularities}
    assert found == set(rl.GPT2_IRREGULARITIES) | set(rl.BERT_IRREGULARITIES)
    assert {d.load_name for d in drawn} == {"", "vocab.json", "merges.txt", "vocab.txt"}


# what labkit refuses that tokenizers serves (it skips an id that is not a number): says what and where
OWN_REFUSALS = ("should be int",)


def test_refusals_say_why(outcomes):
    refusals = [result for results in outcomes.values() for result in results.values() if result.startswith("refused")]
    assert refusals
    for why in refusals:
        assert any(name in why for name in FILES), why  # the file
        assert "tokenizers refuses too" in why or any(reason in why for reason in OWN_REFUSALS), why
        assert "line" in why or "merge #" in why or "BOM" in why or "vocab[" in why, why  # where


def test_the_check_reports_a_wrong_engine(tmp_path, monkeypatch):
    seed = next(s for s in SEEDS if rl.check_seed(s, tmp_path, engines=("labkit",), corpus=[]) == {"labkit": "exact"})
    real_load = labkit.load

    def off_by_one(*args, **kwargs):
        tok = real_load(*args, **kwargs)
        encode = tok.encode

        def wrong(text, **flags):
            enc = encode(text, **flags)
            enc.ids[-1:] = [enc.ids[-1] + 1] if enc.ids and enc.ids[-1] + 1 < tok.vocab_size else enc.ids[-1:]
            return enc

        tok.encode = wrong
        return tok

    monkeypatch.setattr(labkit, "load", off_by_one)
    result = rl.check_seed(seed, tmp_path, engines=("labkit",), corpus=["Hello world, hello again"])
    assert result["labkit"].startswith("differs: encode"), result


def test_the_check_reports_files_served_that_tokenizers_refuses(tmp_path, monkeypatch):
    from labkit.formats import vocab_merges

    seed = next(s for s in SEEDS if "blank_line" in rl.draw_files(s).irregularities)
    lenient = vocab_merges.parse_merges_txt

    def skipping_blank_lines(data, source):
        return lenient(data.replace(b"\n\n", b"\n"), source)

    monkeypatch.setattr(vocab_merges, "parse_merges_txt", skipping_blank_lines)
    result = rl.check_seed(seed, tmp_path, engines=("labkit",), corpus=[])
    assert result["labkit"].startswith("differs: served files tokenizers refuses"), result


def test_the_command_prints_totals(capsys):
    assert rl.main(["--seeds", "2:4", "--engines", "labkit,hf"]) == 0
    out = capsys.readouterr().out
    assert "labkit: exact 2, refused 0, skipped 0, differs 0" in out


# ----------------------------------------------------------------------------- the references


def test_the_gpt2_reference_is_byte_level_bpe_tokenizer_plus_endoftext(tmp_path):
    """The reference reads the pair as ByteLevelBPETokenizer does; it only adds GPT-2's
    <|endoftext|> as a special token (transformers' GPT2TokenizerFast does the same)."""
    from tokenizers.implementations import ByteLevelBPETokenizer

    seed = next(s for s in SEEDS if rl.draw_files(s).kind == "gpt2" and rl.check_seed(s, tmp_path, ("hf",), []) == {"hf": "exact"})
    drawn = rl.draw_files(seed)
    rl.write_files(drawn, tmp_path)
    where = rl.files_folder(drawn, tmp_path)
    ours = rl.reference_tokenizer(drawn, where)
    theirs = ByteLevelBPETokenizer(str(where / "vocab.json"), str(where / "merges.txt"))
    for text in rl.random_texts(drawn):
        if rl.EOT not in text:
            assert ours.encode(text).ids == theirs.encode(text).ids, text


def test_the_bert_reference_built_by_hand_is_bert_wordpiece_tokenizer():
    from tokenizers.implementations import BertWordPieceTokenizer

    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "hello": 5, "##s": 6, "wor": 7, "##ld": 8}
    flags = dict(lowercase=True, strip_accents=None, handle_chinese_chars=True)
    by_hand = rl.bert_by_hand(vocab, **flags)
    library = BertWordPieceTokenizer(vocab, **flags)
    for text in ("Hello worlds", "[CLS] hellos [MASK]", "héllo"):
        assert by_hand.encode(text, add_special_tokens=False).ids == library.encode(text, add_special_tokens=False).ids


# ----------------------------------------------------------------------------- root causes


def _gpt2_reference(folder):
    vocab, merges = models.BPE.read_file(str(folder / "vocab.json"), str(folder / "merges.txt"))
    backend = tokenizers.Tokenizer(models.BPE(vocab, merges))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return backend


def _pair(folder, vocab: dict, merges: bytes):
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_bytes(merges)
    return folder


BASE = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}


def test_a_version_line_anywhere_is_skipped(tmp_path):
    """Seed 9: tokenizers skips every line starting with '#version'; labkit read one that was not
    first as a merge and refused the file."""
    folder = _pair(tmp_path, BASE, b"#version: 0.2\na b\n#version: 0.2\nab c\n")
    reference = _gpt2_reference(folder)
    for engine in ("labkit", "hf"):
        assert labkit.load(folder, engine=engine).encode("abc").ids == reference.encode("abc").ids == [5]


@pytest.mark.parametrize("merges, why", [
    (b"a b\n\nab c\n", "line 2 is blank"),  # seed 20
    (b"\xef\xbb\xbf#version: 0.2\na b\n", "BOM"),  # seed 42
    (b"a b\nab c\r", "'c\\r'"),  # seed 85: a last line with no newline keeps its CR
])
def test_merges_tokenizers_refuses_are_refused(tmp_path, merges, why):
    """labkit served these merges.txt files (it skipped blank lines, dropped a BOM, stripped every
    CR); tokenizers refuses them."""
    folder = _pair(tmp_path, BASE, merges)
    with pytest.raises(Exception):
        _gpt2_reference(folder)
    for engine in ("labkit", "hf"):
        with pytest.raises(labkit.LabkitError, match=why.replace("\\", "\\\\")):
            labkit.load(folder, engine=engine)


def test_crlf_merges_are_read_without_the_cr(tmp_path):
    folder = _pair(tmp_path, BASE, b"#version: 0.2\r\na b\r\nab c\r\n")
    reference = _gpt2_reference(folder)
    assert labkit.load(folder, engine="labkit").encode("abc").ids == reference.encode("abc").ids == [5]


def test_a_vocab_json_with_a_bom_is_refused(tmp_path):
    """Seed 52: tokenizers (serde_json) refuses a BOM before vocab.json's '{'; labkit dropped it."""
    folder = _pair(tmp_path, BASE, b"a b\n")
    (folder / "vocab.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(BASE).encode())
    with pytest.raises(Exception, match="expected value"):
        _gpt2_reference(folder)
    with pytest.raises(labkit.LabkitError, match="vocab.json: starts with a UTF-8 BOM"):
        labkit.load(folder, engine="labkit")


def test_a_merge_listed_twice_keeps_its_last_rank(tmp_path):
    """Seed 21: tokenizers collects merges.txt into a map, so a merge listed twice has its last
    rank; labkit's byte-level engine kept the first for this format."""
    folder = _pair(tmp_path, BASE, b"b c\na b\nb c\nab c\n")
    reference = _gpt2_reference(folder)
    assert reference.encode("abc").ids == [5]  # a+b (rank 1) before b+c (rank 2, not 0), then ab+c
    for engine in ("labkit", "hf"):
        assert labkit.load(folder, engine=engine).encode("abc").ids == [5], engine


def test_an_id_hole_decodes_to_nothing(tmp_path):
    """Seed 21: an id vocab.json (or tokenizer.json) skips has no token in tokenizers, and decode
    drops it; both engines decoded labkit's placeholder '<|unused_N|>'."""
    holes = {"a": 0, "b": 1, "ab": 3, "<|endoftext|>": 6}
    folder = _pair(tmp_path, holes, b"a b\n")
    reference = _gpt2_reference(folder)
    ids = [0, 2, 4, 3, 5]
    assert reference.decode(ids) == "aab"
    for engine in ("labkit", "hf"):
        assert labkit.load(folder, engine=engine).decode(ids) == "aab", engine
    json_folder = tmp_path / "json"
    json_folder.mkdir()
    reference.save(str(json_folder / "tokenizer.json"))
    assert labkit.load(json_folder, engine="labkit").decode(ids) == "aab"


def _bert_reference(path):
    from tokenizers.implementations import BertWordPieceTokenizer

    return BertWordPieceTokenizer(models.WordPiece.read_file(str(path)))


BERT_LINES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##s", "wor", "##ld"]


@pytest.mark.parametrize("end", [" ", "\t", "\r", "\u3000", "\u00a0 "])
def test_vocab_txt_lines_lose_trailing_whitespace(tmp_path, end):
    """Seed 55: tokenizers trims each vocab.txt line's end (Unicode White_Space); labkit kept
    spaces and tabs in the token ('[UNK] ' was no longer the unknown token)."""
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(line + end for line in BERT_LINES) + "\n", encoding="utf-8")
    reference = _bert_reference(path)
    for engine in ("labkit", "hf"):
        tok = labkit.load(path, engine=engine)
        for text in ("hellos world", "[MASK] unknown"):
            assert tok.encode(text, add_special_tokens=True).ids == reference.encode(text).ids, (engine, text)


def test_vocab_txt_keeps_the_control_character_python_calls_space(tmp_path):
    """U+001C is whitespace to str.isspace() but not to Rust's trim_end: it stays in the token."""
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(BERT_LINES + ["x\x1c"]) + "\n", encoding="utf-8")
    assert "x\x1c" in models.WordPiece.read_file(str(path))
    assert labkit.load(path, engine="labkit").token_to_id("x\x1c") == len(BERT_LINES)


def test_a_vocab_txt_bom_stays_in_the_first_token(tmp_path):
    """Seed 38: tokenizers keeps a BOM as part of the first token ('\\ufeff[PAD]', no special);
    labkit dropped it and matched '[PAD]' in text."""
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(BERT_LINES).encode() + b"\n")
    reference = _bert_reference(path)
    for engine in ("labkit", "hf"):
        tok = labkit.load(path, engine=engine)
        assert tok.encode("[PAD] hello").ids == reference.encode("[PAD] hello", add_special_tokens=False).ids
        assert tok.token_to_id("\ufeff[PAD]") == 0


def test_a_merges_txt_starting_with_a_brace_is_not_json(tmp_path):
    """Seed 3915: a merges.txt whose first merge is '{ e' was read as broken JSON and refused."""
    folder = _pair(tmp_path, {"{": 0, "e": 1, "{{": 2}, b"{ {\n")
    reference = _gpt2_reference(folder)
    assert labkit.load(folder / "merges.txt", engine="labkit").encode("{{e").ids == reference.encode("{{e").ids == [2, 1]


def test_a_blank_merges_txt_says_it_is_blank(tmp_path):
    """Seed 4658: a merges.txt holding one CRLF (a blank line: tokenizers refuses it) loaded by its
    path was 'unknown format'."""
    folder = _pair(tmp_path, BASE, b"\r\n")
    with pytest.raises(Exception, match="invalid at line 1"):
        _gpt2_reference(folder)
    with pytest.raises(labkit.LabkitError, match="line 1 is blank"):
        labkit.load(folder / "merges.txt")


def test_a_vocab_txt_starting_with_a_brace_is_not_json(tmp_path):
    """Seed 81: a vocab.txt whose first token is '{' was read as broken JSON and refused."""
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(["{", *BERT_LINES]) + "\n", encoding="utf-8")
    reference = _bert_reference(path)
    tok = labkit.load(path, engine="labkit")
    assert tok.encode("{hello}", add_special_tokens=True).ids == reference.encode("{hello}").ids


def test_a_vocab_json_with_a_string_id_names_it(tmp_path):
    """Seed 78: a vocab.json with one id that is not a number was refused as 'not a tokenizer
    file'; the refusal now names the entry (tokenizers skips it; labkit refuses, never guesses)."""
    folder = _pair(tmp_path, dict(BASE, zz="7"), b"a b\n")
    with pytest.raises(labkit.LabkitError, match=r"vocab\['zz'\] should be int"):
        labkit.load(folder)


def test_a_vocab_json_lone_surrogate_is_refused(tmp_path):
    """serde_json (tokenizers) refuses a lone surrogate escape; Python's json makes a str that
    cannot be encoded, so labkit refuses it at load rather than fail later."""
    folder = _pair(tmp_path, BASE, b"a b\n")
    (folder / "vocab.json").write_text(json.dumps(BASE)[:-1] + ', "\\ud800": 9}', encoding="utf-8")
    with pytest.raises(Exception, match="hex escape"):
        _gpt2_reference(folder)
    with pytest.raises(labkit.LabkitError, match="lone surrogate"):
        labkit.load(folder, engine="labkit")


def test_vocab_txt_duplicates_and_empty_lines_are_served_as_tokenizers_reads_them(tmp_path):
    """Seeds 1 and 4: labkit refused a vocab.txt with an empty line or a spelling on two lines;
    tokenizers reads "" as a token and gives a repeated spelling its last line (the earlier id
    has no token: decode drops it). Both are now read that way."""
    path = tmp_path / "vocab.txt"
    lines = ["[PAD]", "[UNK]", "hello", "", "[CLS]", "[SEP]", "hello", "##s", "[UNK]", "", "[MASK]", "wor", "##ld"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reference = _bert_reference(path)
    ids = list(range(len(lines)))
    for engine in ("labkit", "hf"):
        tok = labkit.load(path, engine=engine)
        for text in ("hellos world", "zzz [UNK] hello", "[MASK]"):
            assert tok.encode(text, add_special_tokens=True).ids == reference.encode(text).ids, (engine, text)
        for skip in (False, True):
            assert tok.decode(ids, skip_special_tokens=skip) == reference.decode(ids, skip_special_tokens=skip)


def test_a_vocab_txt_without_unk_fails_only_on_words_with_no_pieces(tmp_path):
    """Seed 58: labkit's WordPiece engine refused a vocab.txt without [UNK] at load; tokenizers
    serves it and fails only on a word it cannot piece together. labkit now does the same,
    with a LabkitError naming the word and the file."""
    path = tmp_path / "vocab.txt"
    path.write_text("hello\n##s\n[CLS]\n[SEP]\n", encoding="utf-8")
    reference = _bert_reference(path)
    for engine in ("labkit", "hf"):
        tok = labkit.load(path, engine=engine)
        assert tok.encode("hellos", add_special_tokens=True).ids == reference.encode("hellos").ids == [2, 0, 1, 3]
        with pytest.raises(Exception, match="Missing"):
            reference.encode("hello zz")
        with pytest.raises(labkit.LabkitError, match="vocab.txt"):
            tok.encode("hello zz")


def test_a_merges_txt_of_letters_and_digits_is_not_read_as_tiktoken(tmp_path):
    """Seed 418: a merges.txt whose every line looks like 'base64 rank' ('a 1') was read as a
    .tiktoken file when loaded by its path, and refused."""
    vocab = {"a": 0, "1": 1, "a1": 2, "b": 3, "2": 4, "b2": 5}
    folder = _pair(tmp_path, vocab, b"a 1\nb 2\n")
    reference = _gpt2_reference(folder)
    tok = labkit.load(folder / "merges.txt", engine="labkit")
    assert (tok.vocab.format, tok.vocab.merges) == ("vocab_merges", [("a", "1"), ("b", "2")])
    assert tok.encode("a1 b2").ids == reference.encode("a1 b2").ids
