"""labkit's SentencePiece BPE against sentencepiece and tokenizers: shipped vectors,
hypothesis text, toy vocabularies with hand-worked answers, byte fallback, unknowns,
unused and user-defined pieces, decode."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from labkit.engines.hf import convert_model_file
from labkit.algorithms.spm_bpe import SpmBpeModel, chunk_rule, parse_byte_piece
from labkit.bench.harness import corpus_lines
from labkit.core import (
    TOKEN_BYTE,
    TOKEN_CONTROL,
    TOKEN_NORMAL,
    TOKEN_UNKNOWN,
    TOKEN_UNUSED,
    TOKEN_USER_DEFINED,
    AddedToken,
    LabkitError,
    SpecialTokens,
    VocabData,
)
from labkit.engines import labkit_spm_bpe
from labkit.engines import sentencepiece_engine
from labkit.vectors import load_vectors

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LLAMA_VECTORS = load_vectors("llama-spm")


@pytest.fixture(scope="module")
def llama():
    return labkit.load("llama-spm", engine="labkit")


@pytest.fixture(scope="module")
def llama_hf():
    return convert_model_file("llama-spm")


@pytest.fixture(scope="module")
def llama_sp():
    return labkit.load("llama-spm", engine="sentencepiece")


@pytest.fixture(scope="module")
def botchan():
    return labkit.load("botchan-bpe", engine="labkit")


@pytest.fixture(scope="module")
def botchan_sp():
    return labkit.load("botchan-bpe", engine="sentencepiece")


# text that exercises spaces, digits, byte fallback (emoji, rare scripts) and specials
PIECES = st.one_of(
    st.sampled_from(list(" \t\n\u00a0\u3000abcdeHW'!.,3é") + ["<s>", "</s>", "\u2581", "ı", "🦙", "한", "Ā", "  "]),
    st.characters(codec="utf-8"),
)
TEXT = st.lists(PIECES, max_size=24).map("".join)


# ----------------------------------------------------------------------------- vectors


@pytest.mark.parametrize("index", range(len(LLAMA_VECTORS)))
def test_llama_vectors(llama, llama_hf, llama_sp, index):
    text, expected = LLAMA_VECTORS[index]
    got = llama.encode(text, parse_special=False)
    assert got.ids == expected
    assert llama_hf.encode(text, parse_special=False).ids == expected
    assert llama_sp.encode(text, parse_special=False).ids == expected
    assert got.offsets == llama_hf.encode(text, parse_special=False).offsets
    assert llama.decode(expected) == llama_hf.decode(expected)


def test_llama_vectors_through_textbook_loop(llama):
    model = llama.model
    for text, expected in LLAMA_VECTORS:
        normalized = llama.normalizer.normalize(text)
        naive = model.pieces_to_ids(model.merge_naive(normalized))
        assert [i for i, _, _ in naive] == expected


def test_botchan_lines_match_sentencepiece(botchan, botchan_sp):
    lines = corpus_lines()[::8]
    for line in lines:
        ids = botchan.encode(line).ids
        assert ids == botchan_sp.encode(line).ids, line
        assert botchan.decode(ids) == botchan_sp.decode(ids), line


def test_botchan_matches_tokenizers_conversion_on_corpus_lines(botchan):
    hf = convert_model_file("botchan-bpe")  # the hf engine refuses .model files; its conversion by name
    for line in corpus_lines()[1::16]:
        assert botchan.encode(line).ids == hf.encode(line).ids, line


# ----------------------------------------------------------------------------- hypothesis


@SETTINGS
@given(text=TEXT, parse_special=st.booleans())
def test_llama_hypothesis_matches_references(llama, llama_hf, llama_sp, text, parse_special):
    got = llama.encode(text, parse_special=parse_special)
    ref = llama_sp.encode(text, parse_special=parse_special)
    assert got.ids == ref.ids
    hf = llama_hf.encode(text, parse_special=parse_special)
    assert got.ids == hf.ids
    assert got.offsets == hf.offsets
    assert llama.decode(got.ids) == llama_hf.decode(got.ids)


@SETTINGS
@given(text=TEXT, parse_special=st.booleans())
def test_botchan_hypothesis_matches_sentencepiece(botchan, botchan_sp, text, parse_special):
    got = botchan.encode(text, parse_special=parse_special)
    assert got.ids == botchan_sp.encode(text, parse_special=parse_special).ids
    assert botchan.decode(got.ids) == botchan_sp.decode(got.ids)


@SETTINGS
@given(ids=st.lists(st.integers(259, 31999), max_size=12), skip=st.booleans())
def test_llama_decode_random_ids_like_tokenizers(llama, llama_hf, ids, skip):
    # a GGUF decodes as llama.cpp does (tests/test_llama_spm_gguf.py); tokenizers agrees on
    # ordinary pieces, and differs on specials (their space), byte pieces (U+FFFD per byte)
    assert llama.decode(ids, skip_special_tokens=skip) == llama_hf.decode(ids, skip_special_tokens=skip)


@SETTINGS
@given(ids=st.lists(st.one_of(st.integers(0, 999), st.sampled_from([0, 1, 2, 3, 931])), max_size=12), skip=st.booleans())
def test_botchan_decode_random_ids_like_sentencepiece(botchan, botchan_sp, ids, skip):
    assert botchan.decode(ids, skip_special_tokens=skip) == botchan_sp.decode(ids, skip_special_tokens=skip)


@SETTINGS
@given(text=TEXT)
def test_naive_loop_equals_priority_queue(llama, text):
    model = llama.model
    normalized = llama.normalizer.normalize(text)
    naive_trace, heap_trace = [], []
    assert model.merge_naive(normalized, naive_trace) == model.merge(normalized, heap_trace)
    assert naive_trace == heap_trace


# ----------------------------------------------------------------------------- toy vocabularies


def _toy(pieces, *, byte_fallback=False, unk="<unk>", add_dummy_prefix=False):
    """A SentencePiece BPE VocabData from (piece, score, type) triples."""
    tokens = [unk, "<s>", "</s>"] + [p for p, _, _ in pieces]
    scores = [0.0, 0.0, 0.0] + [s for _, s, _ in pieces]
    types = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL] + [t for _, _, t in pieces]
    return VocabData(
        source="toy", format="gguf", model="spm_bpe", tokens=tokens, token_types=types, scores=scores,
        normalizer={"add_dummy_prefix": add_dummy_prefix, "remove_extra_whitespaces": False,
                    "escape_whitespaces": True, "charsmap": None},
        options={"byte_fallback": byte_fallback},
        specials=SpecialTokens(unk=unk, unk_id=0, bos="<s>", bos_id=1, eos="</s>", eos_id=2),
        added_tokens=[AddedToken("<s>", 1), AddedToken("</s>", 2)],
    )


N = TOKEN_NORMAL


def _pieces(vocab, text):
    # sentencepiece's loop (what a .model gets); build() gives a GGUF llama.cpp's (tests/test_llama_spm_gguf.py)
    return labkit_spm_bpe.SpmBpeTokenizer(vocab).encode(text).tokens


def _sp_pieces(vocab, text):
    # sentencepiece's own loop, as a .model gets it (on a GGUF the engine refuses what llama.cpp runs otherwise)
    return sentencepiece_engine.build(dataclasses.replace(vocab, format="spm_model")).encode(text).tokens


def test_highest_score_merges_first():
    # 'bc' outscores 'ab', so "abc" -> a + bc, although 'ab' comes first in the text
    vocab = _toy([("a", -1, N), ("b", -2, N), ("c", -3, N), ("ab", -5, N), ("bc", -4, N)])
    assert _pieces(vocab, "abc") == ["a", "bc"]
    assert _sp_pieces(vocab, "abc") == ["a", "bc"]


def test_equal_scores_merge_leftmost_first():
    vocab = _toy([("a", -1, N), ("b", -2, N), ("c", -3, N), ("ab", -4, N), ("bc", -4, N)])
    assert _pieces(vocab, "abc") == ["ab", "c"]
    assert _sp_pieces(vocab, "abc") == ["ab", "c"]


def test_score_not_id_decides():
    # a rank-BPE reading (lower id first) would merge 'ab' first; the score says 'bc'
    vocab = _toy([("a", -1, N), ("b", -2, N), ("c", -3, N), ("ab", -9, N), ("bc", -6, N)])
    assert _pieces(vocab, "abc") == ["a", "bc"]
    assert _sp_pieces(vocab, "abc") == ["a", "bc"]
    # and the trace shows the order: 'bc' first, then 'abc' out of 'a' + 'bc'
    model = SpmBpeModel.from_vocab(_toy([("a", -1, N), ("b", -2, N), ("c", -3, N), ("ab", -9, N), ("bc", -6, N), ("abc", -7, N)]))
    trace = []
    assert model.merge("abc", trace) == ["abc"]
    assert [(step.left, step.right) for step in trace] == [("b", "c"), ("a", "bc")]


def test_unused_piece_is_split_back():
    vocab = _toy([("a", -1, N), ("b", -2, N), ("c", -3, N), ("ab", -4, TOKEN_UNUSED), ("abc", -5, N)])
    # 'ab' (unused) is formed, then 'abc' from it; "ab" alone comes back as a + b
    assert _pieces(vocab, "abc") == ["abc"]
    assert _pieces(vocab, "abab") == ["a", "b", "a", "b"]
    assert _sp_pieces(vocab, "abab") == ["a", "b", "a", "b"]
    assert _sp_pieces(vocab, "abc") == ["abc"]


def test_unknown_characters_fuse_without_byte_fallback():
    vocab = _toy([("a", -1, N), ("b", -2, N)])
    tok = labkit_spm_bpe.SpmBpeTokenizer(vocab)
    enc = tok.encode("axyb")
    assert enc.tokens == ["a", "<unk>", "b"]
    assert enc.offsets == [(0, 1), (1, 3), (3, 4)]
    assert _sp_pieces(vocab, "axyb") == ["a", "<unk>", "b"]


def test_byte_fallback_spells_utf8_bytes():
    bytes_ = [(f"<0x{b:02X}>", 0.0, TOKEN_BYTE) for b in range(256)]
    vocab = _toy([*bytes_, ("a", -1, N)], byte_fallback=True)
    tok = labkit_spm_bpe.build(vocab)
    enc = tok.encode("aé")
    assert enc.tokens == ["a", "<0xC3>", "<0xA9>"]
    assert enc.offsets == [(0, 1), (1, 2), (1, 2)]
    assert tok.decode(enc.ids) == "aé"
    assert _sp_pieces(vocab, "aé") == ["a", "<0xC3>", "<0xA9>"]


def test_dummy_prefix_and_spaces(llama):
    assert llama.encode("Hello").tokens == ["▁Hello"]
    assert llama.encode(" Hello").tokens == ["▁", "▁Hello"]
    assert llama.encode("Hello world").tokens == ["▁Hello", "▁world"]
    assert llama.decode(llama.encode(" Hello").ids) == " Hello"


def test_dummy_prefix_after_special_token(llama, llama_hf):
    # llama.cpp and tokenizers both put a fresh '▁' after a special token
    enc = llama.encode("a</s>b")
    assert enc.tokens == ["▁a", "</s>", "▁b"]
    assert enc.ids == llama_hf.encode("a</s>b").ids
    assert llama.encode("a</s>b", parse_special=False).ids == llama_hf.encode("a</s>b", parse_special=False).ids


def test_bos_framing(llama):
    assert llama.encode("Hello", add_special_tokens=True).ids == [1, 15043]
    assert llama.decode([1, 15043]) == "<s> Hello"
    # llama.cpp's answer: the hidden <s> takes the leading-space strip, so '▁Hello' keeps its space
    assert llama.decode([1, 15043], skip_special_tokens=True) == " Hello"


def test_emoji_byte_fallback_round_trip(llama):
    enc = llama.encode("🦙")
    assert enc.tokens == ["▁", "<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"]
    assert [parse_byte_piece(t) for t in enc.tokens[1:]] == list("🦙".encode())
    assert llama.decode(enc.ids) == "🦙"


def test_phi3_style_user_defined_chat_tokens():
    base = labkit.load("llama-spm", engine="labkit").vocab
    extra = ["<|user|>", "<|assistant|>", "<|end|>"]
    vocab = dataclasses.replace(
        base,
        tokens=[*base.tokens, *extra],
        token_types=[*base.token_types, *[TOKEN_USER_DEFINED] * 3],
        scores=[*base.scores, 0.0, 0.0, 0.0],
        added_tokens=[*base.added_tokens, *(AddedToken(t, 32000 + k, special=False) for k, t in enumerate(extra))],
    )
    tok = labkit_spm_bpe.build(vocab)
    ref = convert_model_file(vocab)  # tokenizers' reading: engine="hf" refuses a llama GGUF
    for text in ["<|user|>\nHi there<|end|>\n<|assistant|>", "a<|end|>b", "<|user|> x", "x <|end|>"]:
        for parse_special in (True, False):
            got = tok.encode(text, parse_special=parse_special)
            assert got.ids == ref.encode(text, parse_special=parse_special).ids, text
            assert tok.decode(got.ids) == ref.decode(got.ids)
    assert tok.encode("<|user|>Hi").tokens == ["<|user|>", "▁Hi"]


def test_chunk_rule():
    assert chunk_rule(["▁the", "▁▁", "a"], [N, N, N]) == "prefix"
    assert chunk_rule(["the▁", "a"], [N, N]) == "suffix"
    assert chunk_rule(["a▁b"], [N]) is None
    # a control piece cannot be made by a merge, so it does not matter
    assert chunk_rule(["a▁b", "x"], [TOKEN_CONTROL, N]) == "prefix"


def test_model_rejects_bad_input():
    with pytest.raises(LabkitError):
        SpmBpeModel(["a"], [0.0, 1.0])
    with pytest.raises(LabkitError):
        SpmBpeModel(["a", "b"], [0.0, 0.0], unk_id=5)
    model = SpmBpeModel(["a"], [0.0])
    with pytest.raises(LabkitError):
        model.encode("b")  # no unknown piece to fall back on


def test_engine_rejects_bad_input(llama):
    with pytest.raises(LabkitError):
        llama.encode(b"bytes")
    with pytest.raises(LabkitError):
        llama.decode([32000])
    with pytest.raises(LabkitError):
        llama.decode([-1])
    with pytest.raises(LabkitError):
        labkit_spm_bpe.build(convert_model_file("bert-bge").vocab)


def test_tokenizer_json_bpe_is_left_to_tokenizers(llama):
    from labkit.core import EngineUnavailable

    vocab = dataclasses.replace(llama.vocab, format="hf_json", options={**llama.vocab.options, "scores_from_merges": True})
    with pytest.raises(EngineUnavailable):
        labkit_spm_bpe.build(vocab)
