"""labkit's WordPiece against tokenizers: shipped vectors (bert-bge GGUF and the
all-MiniLM-L6-v2 tokenizer.json), hypothesis text, hand-worked toy vocabularies, decode."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.algorithms.bert_basic import BertBasicTokenizer
from labkit.algorithms.wordpiece import WordPiece, decode_wordpiece
from labkit.bench.harness import corpus_lines
from labkit.core import LabkitError
from tokenizers import decoders
from labkit.engines import labkit_wordpiece
from labkit.engines.hf import convert_model_file
from support.engines import compared
from labkit.vectors import load_vectors

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BERT_VECTORS = load_vectors("bert-bge")
NAMES = ("bert-bge", "minilm")


def bert_pipeline(name: str) -> labkit.Tokenizer:
    """labkit's BERT pipeline (what a vocab.txt or tokenizer.json gets) over ``name``'s vocabulary:
    labkit.load gives the bert-bge GGUF llama.cpp's WordPiece instead (tests/test_conformance_random_gguf_wpm.py)."""
    return labkit_wordpiece.WordPieceTokenizer(compared(name, "hf").vocab)


@pytest.fixture(scope="module", params=NAMES)
def pair(request):
    return bert_pipeline(request.param), compared(request.param, "hf")


@pytest.fixture(scope="module")
def bge():
    return bert_pipeline("bert-bge")


@pytest.fixture(scope="module")
def bge_hf():
    return convert_model_file("bert-bge")


PIECES = st.one_of(
    st.sampled_from(list(" \t\n\u00a0\u3000\u200b\x00\x85\ufffdaBcÉé,.!?'-$^") + [
        "e\u0301", "\u0301", "\u0316", "İ", "ß", "Σ", "世", "界", "\uf900", "🦙", "[CLS]", "[SEP]", "[MASK]",
        "don't", "unaffable", "x" * 101, "\U00011938", "\ua7cb", "\u0890", "\u2e5d", "\u1d165",
    ]),
    st.characters(codec="utf-8"),
)
TEXT = st.lists(PIECES, max_size=20).map("".join)


# ----------------------------------------------------------------------------- vectors


@pytest.mark.parametrize("index", range(len(BERT_VECTORS)))
def test_bert_vectors(pair, index):
    tok, ref = pair
    text, expected = BERT_VECTORS[index]
    got = tok.encode(text, parse_special=False)
    assert got.ids == expected
    assert ref.encode(text, parse_special=False).ids == expected
    assert got.offsets == ref.encode(text, parse_special=False).offsets
    assert tok.decode(expected) == ref.decode(expected)
    framed = tok.encode(text, add_special_tokens=True, parse_special=False)
    assert framed.ids == [101, *expected, 102]
    assert framed.ids == ref.encode(text, add_special_tokens=True, parse_special=False).ids


def test_corpus_lines(bge, bge_hf):
    for line in corpus_lines()[::10]:
        got = bge.encode(line)
        ref = bge_hf.encode(line)
        assert got.ids == ref.ids, line
        assert got.offsets == ref.offsets, line
        assert bge.decode(got.ids) == bge_hf.decode(got.ids)


# ----------------------------------------------------------------------------- hypothesis


@SETTINGS
@given(text=TEXT, parse_special=st.booleans(), frame=st.booleans())
def test_hypothesis_matches_tokenizers(pair, text, parse_special, frame):
    tok, ref = pair
    got = tok.encode(text, parse_special=parse_special, add_special_tokens=frame)
    want = ref.encode(text, parse_special=parse_special, add_special_tokens=frame)
    assert got.ids == want.ids
    assert got.tokens == want.tokens
    assert got.offsets == want.offsets
    assert tok.decode(got.ids) == ref.decode(want.ids)


@SETTINGS
@given(ids=st.lists(st.integers(0, 30521), max_size=15), skip=st.booleans())
def test_decode_random_ids(bge, bge_hf, ids, skip):
    assert bge.decode(ids, skip_special_tokens=skip) == bge_hf.decode(ids, skip_special_tokens=skip)


@SETTINGS
@given(text=TEXT)
def test_encode_ordinary_equals_encode(bge, text):
    assert bge.encode_ordinary(text) == bge.encode(text, parse_special=False).ids


# ----------------------------------------------------------------------------- toy vocabularies


def _model(tokens, **options):
    return WordPiece.from_tokens(["[UNK]", *tokens], **options)


def test_unaffable_textbook_vocab():
    model = _model(["un", "##aff", "##able", "a", "##a"])
    assert model.tokenize("unaffable") == ["un", "##aff", "##able"]
    found = [a.candidate for a in model.trace("unaffable") if a.found]
    assert found == ["un", "##aff", "##able"]


def test_unaffable_real_bert_vocab(bge):
    # greedy longest-first is not morphology: 'una' is in BERT's vocabulary
    assert bge.encode("unaffable").tokens == ["una", "##ffa", "##ble"]


def test_longest_match_first():
    model = _model(["a", "ab", "abc", "##c", "##bc", "##d"])
    assert model.tokenize("abcd") == ["abc", "##d"]
    assert model.tokenize("abd") == ["ab", "##d"]


def test_one_failure_makes_the_whole_word_unknown():
    model = _model(["ab", "##c"])
    assert model.tokenize("abcx") == ["[UNK]"]
    assert model.tokenize_word("abcx") == [(0, 0, 4)]


def test_words_longer_than_the_limit_are_unknown():
    model = _model(["a", "##a"], max_input_chars_per_word=5)
    assert model.tokenize("aaaaa") == ["a", "##a", "##a", "##a", "##a"]
    assert model.tokenize("aaaaaa") == ["[UNK]"]


def test_basic_tokenizer_steps():
    basic = BertBasicTokenizer()
    steps = basic.steps("Héllo\u200b, 世界!\tDon't")
    assert steps.cleaned == "Héllo, 世界! Don't"
    assert steps.cjk_spaced == "Héllo,  世  界 ! Don't"
    assert steps.accents_stripped == "Hello,  世  界 ! Don't"
    assert steps.lowercased == "hello,  世  界 ! don't"
    assert steps.words == ["hello", ",", "世", "界", "!", "don", "'", "t"]
    assert basic.tokenize("Héllo\u200b, 世界!\tDon't") == steps.words


def test_cased_basic_tokenizer_keeps_case_and_accents():
    basic = BertBasicTokenizer(lowercase=False)
    assert basic.tokenize("Héllo World") == ["Héllo", "World"]


def test_offsets_point_into_the_original_text(bge):
    text = "Ünïcode\u200b 世界"
    enc = bge.encode(text)
    assert [text[s:e] for s, e in enc.offsets] == ["Ünïcode", "世", "界"]


def test_decode_rejoins_pieces_and_cleans_up():
    assert decode_wordpiece(["un", "##aff", "##able", "!"]) == "unaffable!"
    # the cleanup runs on each token after its space is added, so only one-token patterns fire
    assert decode_wordpiece(["i", "do", "not", "know", "."]) == "i do not know."
    assert decode_wordpiece(["it", "'", "s"]) == "it ' s"
    assert decode_wordpiece(["##a", "b"]) == "##a b"  # the first token keeps its prefix
    assert decode_wordpiece(["a", ","], cleanup=False) == "a ,"


@SETTINGS
@given(tokens=st.lists(st.sampled_from(["a", "##b", "do", "not", "n't", "'", "s", "'s", ".", "##.", " ", "?", "!", ",", "[CLS]", "##"]), max_size=10))
def test_decoder_matches_tokenizers(tokens):
    assert decode_wordpiece(tokens) == decoders.WordPiece(prefix="##", cleanup=True).decode(tokens)


def test_bad_input(bge):
    with pytest.raises(LabkitError):
        bge.encode(None)
    with pytest.raises(LabkitError):
        bge.decode([30522])
    with pytest.raises(LabkitError):
        bge.encode("a\ud800b")
    no_unk = WordPiece({"a": 0})  # tokenizers builds it too, and fails only where [UNK] is needed
    assert no_unk.tokenize_word("a") == [(0, 0, 1)]
    with pytest.raises(LabkitError, match="no pieces"):
        no_unk.tokenize_word("b")
    with pytest.raises(LabkitError):
        labkit_wordpiece.build(convert_model_file("llama-spm").vocab)


def test_tokenizer_json_with_another_pipeline_is_left_to_tokenizers():
    import dataclasses
    import json

    from labkit.core import EngineUnavailable

    vocab = labkit.load("minilm", engine="hf").vocab
    other = dataclasses.replace(vocab, metadata={**vocab.metadata, "pre_tokenizer": {"type": "Whitespace"}})
    with pytest.raises(EngineUnavailable):
        labkit_wordpiece.build(other)
    seq = {"type": "Sequence", "normalizers": [{"type": "BertNormalizer", "lowercase": True}]}
    assert labkit_wordpiece.build(dataclasses.replace(vocab, metadata={**vocab.metadata, "normalizer": seq})).engine == "labkit"
    assert json.dumps(vocab.metadata["decoder"])  # the shipped file passes as it is
    assert labkit.load("minilm").engine == "labkit"
