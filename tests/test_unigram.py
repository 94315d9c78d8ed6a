"""labkit's Unigram (trie, lattice, Viterbi, engine) == sentencepiece, on the shipped model,
on models trained here, and on random text."""
from __future__ import annotations

import random

import pytest
import sentencepiece as spm
from hypothesis import given, settings, strategies as st

import labkit
from labkit.algorithms.charsmap import SpmNormalizer
from labkit.algorithms.unigram import DictTrie, PieceTrie, UnigramModel, split_words
from labkit.algorithms.unigram_words import WordCache
from labkit.core import LabkitError
from labkit.engines.labkit_unigram import build
from labkit.formats.spm_model import read_spm_model
from labkit.paths import data_path

SHIPPED = data_path("sentencepiece/botchan_en_unigram_1000.model")
LINES = data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n")
UNK = 0


@pytest.fixture(scope="module")
def shipped():
    return labkit.load(str(SHIPPED), engine="labkit"), spm.SentencePieceProcessor(model_file=str(SHIPPED))


def sp_tokens(sp, text):
    """sentencepiece's pieces with unknowns spelled by their id's piece (as labkit does)."""
    return [sp.id_to_piece(i) for i in sp.encode(text)]


def assert_same(tok, sp, text):
    enc = tok.encode(text, parse_special=False)
    ref = sp.encode(text, out_type="offset_mapping", return_bytes=False)
    assert enc.ids == ref["ids"], text
    assert enc.tokens == sp_tokens(sp, text), text
    assert enc.offsets == [tuple(o) for o in ref["offsets"]], text
    assert tok.encode_ordinary(text) == ref["ids"], text


def test_every_botchan_line(shipped):
    tok, sp = shipped
    assert tok.engine == "labkit"
    for line in LINES:
        assert_same(tok, sp, line)


def test_whole_book_as_one_text(shipped):
    tok, sp = shipped
    text = "\n".join(LINES[:600])
    assert tok.encode(text, parse_special=False).ids == sp.encode(text)


def test_what_is_lora(shipped):
    tok, sp = shipped
    enc = tok.encode("What is LoRA?")
    assert enc.tokens == ["▁What", "▁is", "▁", "L", "o", "R", "A", "?"]
    assert enc.ids == sp.encode("What is LoRA?")


MIXED = st.lists(
    st.one_of(
        st.sampled_from(list("  \t\n\u3000abcdeIt.,'\"-")),
        st.sampled_from(list("Ｈｅｌｌｏ１２ｶﾀｶﾅﾞﾟ①②ﬁﬂ½㍿™")),  # full-width, half-width, compatibility
        st.sampled_from(list("中文日本語한국어")),  # CJK: unknown to an English model
        st.sampled_from(["e\u0301", "a\u0308", "\u0301", "\u3099"]),  # combining marks
        st.sampled_from(list("\x00\x01\x1b\x7f\u200b\u2581")),  # control characters, ▁ itself
        st.characters(blacklist_categories=("Cs",)),
        st.sampled_from(["  ", "   ", " \t "]),  # runs of spaces
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(MIXED)
def test_hypothesis_text_matches_sentencepiece(text):
    tok, sp = _shipped()
    assert_same(tok, sp, text)


_CACHE: dict = {}


def _tmp_folder() -> str:
    """One temporary folder for the models trained here (never data/), removed at exit."""
    if "tmp" not in _CACHE:
        import atexit
        import shutil
        import tempfile

        _CACHE["tmp"] = tempfile.mkdtemp(prefix="labkit_unigram_")
        atexit.register(shutil.rmtree, _CACHE["tmp"], True)
    return _CACHE["tmp"]


def _shipped():
    if "shipped" not in _CACHE:
        _CACHE["shipped"] = (labkit.load(str(SHIPPED), engine="labkit"), spm.SentencePieceProcessor(model_file=str(SHIPPED)))
    return _CACHE["shipped"]


# ----------------------------------------------------------------------------- trained models

TRAINED = {
    # user-defined symbols (one made of '▁'s, so the lattice must weigh it), byte fallback
    "ud_bytes": dict(vocab_size=700, user_defined_symbols=["LoRA", "ab", "\u2581the\u2581", "<sep>"],
                     control_symbols=["<ctl>"], byte_fallback=True),
    # no normalisation, no dummy prefix, spaces kept as they are
    "identity": dict(vocab_size=500, normalization_rule_name="identity", add_dummy_prefix=False,
                     remove_extra_whitespaces=False),
    # whitespace as a suffix, nmt_nfkc
    "suffix": dict(vocab_size=500, normalization_rule_name="nmt_nfkc", treat_whitespace_as_suffix=True),
}


@pytest.fixture(scope="module")
def trained():
    return {name: _trained(name) for name in TRAINED}


@pytest.mark.parametrize("name", list(TRAINED))
def test_trained_model_every_line(trained, name):
    tok, sp = trained[name]
    extra = ["What is LoRA? abc ab <sep> the  the <ctl> x", "你好 LoRAab", "the the\u2581the", "  lead and trail  ",
             "tabs\tand\nnewlines", "Ｆｕｌｌ ｗｉｄｔｈ ①"]
    for line in LINES[::3] + extra:
        enc = tok.encode(line, parse_special=False)
        assert enc.ids == sp.encode(line), (name, line)
        assert tok.encode_ordinary(line) == sp.encode(line), (name, line)


@settings(max_examples=150, deadline=None)
@given(MIXED)
def test_trained_models_on_random_text(text):
    for name in TRAINED:
        tok, sp = _trained(name)
        assert tok.encode(text, parse_special=False).ids == sp.encode(text), name


def _trained(name):
    key = "trained_" + name
    if key not in _CACHE:
        prefix = f"{_tmp_folder()}/{name}"
        spm.SentencePieceTrainer.train(input=str(data_path("corpus/botchan.txt")), model_prefix=prefix,
                                       model_type="unigram", minloglevel=2, num_threads=1, **TRAINED[name])
        _CACHE[key] = (labkit.load(prefix + ".model", engine="labkit"), spm.SentencePieceProcessor(model_file=prefix + ".model"))
    return _CACHE[key]


def test_user_defined_piece_is_weighed_not_forced(trained):
    tok, sp = trained["ud_bytes"]
    # '▁the▁' is a user-defined piece: sentencepiece takes it in one line, not in another
    uses = [line for line in LINES if " the " in line and "\u2581the\u2581" in sp.encode(line, out_type=str)]
    skips = [line for line in LINES if " the " in line and "\u2581the\u2581" not in sp.encode(line, out_type=str)]
    assert uses and skips
    for line in uses[:50] + skips[:50]:
        assert tok.encode(line, parse_special=False).ids == sp.encode(line)


# ----------------------------------------------------------------------------- the algorithm


def test_word_cache_is_exact_on_long_texts(shipped):
    tok, sp = shipped
    rng = random.Random(5)
    model = tok.model
    for _ in range(40):
        text = " ".join(rng.sample(LINES, 30)) + " ....... ......." * rng.randrange(3)
        normalized = tok.normalizer.normalize(text)
        plain = model.encode(normalized)
        assert WordCache(model).encode(normalized) == plain
        assert WordCache(model).ids(split_words(normalized)) == [i for i, _, _ in plain]
        assert [i for i, _, _ in plain] == sp.encode(text)


def test_float_and_double_sums_split_ties_differently(shipped):
    tok, sp = shipped
    vocab = tok.vocab
    double = UnigramModel(vocab.tokens, vocab.scores, vocab.token_types, sentencepiece=False)
    floats = tok.model
    line = "Hotta....... if you start a scrimmage here, I'll be greatly"
    normalized = tok.normalizer.normalize(line)
    assert [i for i, _, _ in floats.encode(normalized)] == sp.encode(line)
    differs = [l for l in LINES if double.encode(tok.normalizer.normalize(l)) != floats.encode(tok.normalizer.normalize(l))]
    # both orders of '......' and '.' score the same; only rounding picks one
    for l in differs:
        assert "......." in l


def test_lattice_agrees_with_viterbi(shipped):
    tok, _ = shipped
    for text in ["What is LoRA?", LINES[100], "中文 ①② e\u0301"]:
        normalized = tok.normalize(text)
        lattice = tok.lattice(text)
        assert lattice.text == normalized
        assert [(n.id, n.start, n.end) for n in lattice.best_path] == tok.model.viterbi(normalized)
        assert len(lattice.results_table()) == len(normalized) + 1
        # every candidate piece is in the trie at its offset (or is the unknown fallback)
        for node in lattice.nodes:
            if node.kind == "unknown":
                assert node.end == node.start + 1
            else:
                assert (node.end, node.id) in tok.model.trie.prefixes(normalized, node.start)
        path_score = sum(n.score for n in lattice.best_path)
        assert abs(path_score - lattice.score) < 1e-3


def test_nbest_first_is_viterbi(shipped):
    tok, sp = shipped
    for word in ["Hello", "scrimmage", "LoRA"]:
        normalized = tok.normalize(word)
        best = tok.model.nbest(normalized, 4)
        assert best[0][0] == tok.model.viterbi(normalized)
        scores = [score for _, score in best]
        assert scores == sorted(scores, reverse=True)
        assert [[tok.vocab.tokens[i] for i, _, _ in best[0][0]]] == sp.nbest_encode_as_pieces(word, 1)


def test_tries_agree():
    pieces = {"\u2581a": 1, "\u2581ab": 2, "b": 3, "abc": 4, "c": 5}
    plain, engine = DictTrie(pieces), PieceTrie(pieces)
    rng = random.Random(1)
    for _ in range(200):
        text = "".join(rng.choice("\u2581abc") for _ in range(8))
        for start in range(len(text)):
            assert plain.prefixes(text, start) == engine.prefixes(text, start)
    assert plain.get("abc") == 4 and plain.get("ab") is None
    assert [row["found"] for row in plain.walk("\u2581abx")] == [True, True, True, False]


def test_toy_model_and_unknowns():
    model = UnigramModel(["<unk>", "\u2581a", "b", "\u2581"], [0.0, -1.0, -2.0, -3.0], [2, 1, 1, 1])
    assert model.encode("\u2581ab") == [(1, 0, 2), (2, 2, 3)]
    # two unknown characters merge into one unknown token
    assert model.encode("\u2581a\u4e2d\u6587b") == [(1, 0, 2), (0, 2, 4), (2, 4, 5)]
    assert model.unk_score == -13.0  # min score (-3) minus 10
    assert split_words("\u2581the\u2581\u2581cat") == ["\u2581the", "\u2581", "\u2581cat"]


def test_decode_matches_sentencepiece(shipped, trained):
    rng = random.Random(3)
    for tok, sp in [shipped, trained["ud_bytes"], trained["identity"]]:
        for _ in range(300):
            ids = [rng.randrange(tok.vocab_size) for _ in range(rng.randrange(8))]
            assert tok.decode(ids, skip_special_tokens=True) == sp.decode(ids), ids
        for line in LINES[:200:7]:
            assert tok.decode(tok.encode(line).ids) == sp.decode(sp.encode(line))


def test_gguf_t5_vocab(tmp_path, shipped):
    """A t5 GGUF built from the shipped model serves the same ids (llama.cpp semantics
    coincide with sentencepiece's for these flags)."""
    import gguf

    from labkit.core import TOKEN_UNKNOWN

    tok, sp = shipped
    vocab = tok.vocab
    path = tmp_path / "t5-botchan.gguf"
    writer = gguf.GGUFWriter(str(path), arch="t5")
    writer.add_tokenizer_model("t5")
    writer.add_token_list(vocab.tokens)
    writer.add_token_scores(vocab.scores)
    writer.add_token_types(vocab.token_types)
    writer.add_unk_token_id(vocab.token_types.index(TOKEN_UNKNOWN))
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_precompiled_charsmap(vocab.normalizer["charsmap"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    t5 = labkit.load(str(path), engine="labkit")
    assert t5.vocab.format == "gguf" and t5.engine == "labkit"
    assert not t5.model.float32_sums  # llama.cpp adds in doubles
    for line in LINES[::5] + ["Ｈｅｌｌｏ ①", "  a  b  "]:
        assert t5.encode(line, parse_special=False).ids == sp.encode(line), line


def test_bad_input():
    tok, _ = _shipped()
    with pytest.raises(LabkitError):
        tok.encode(b"bytes")
    with pytest.raises(LabkitError):
        tok.encode_ordinary(None)
    with pytest.raises(LabkitError):
        tok.lattice(3)
    with pytest.raises(LabkitError):
        tok.decode([10**6])
    with pytest.raises(LabkitError):
        UnigramModel(["a"], [0.0, 1.0])
    with pytest.raises(LabkitError):
        UnigramModel(["a", "b"], [0.0, -1.0], [1, 1])  # no unknown piece
    with pytest.raises(LabkitError):
        UnigramModel(["<unk>", "a"], [0.0, float("nan")], [2, 1])
    vocab = read_spm_model(SHIPPED)
    vocab.scores = None
    with pytest.raises(LabkitError):
        build(vocab)


def test_normalizer_from_vocab_is_the_engines(shipped):
    tok, sp = shipped
    norm = SpmNormalizer.from_vocab(tok.vocab)
    for line in LINES[:100]:
        assert norm.normalize(line) == tok.normalize(line) == sp.normalize(line)


def test_crafted_near_ties_follow_float_sums(shipped, trained):
    """Runs of '.' and '-' score the same in many orders; sentencepiece's float sums decide."""
    texts = [pre + ch * k + post for pre in ("", "x ", "Hotta", 'once. "', "the the the ")
             for k in range(1, 25) for ch, post in ((".", "I"), ("-", " a"))]
    for tok, sp in [shipped, trained["ud_bytes"]]:
        double = UnigramModel(tok.vocab.tokens, tok.vocab.scores, tok.vocab.token_types, float32_sums=False,
                              byte_fallback=tok.model.byte_fallback)
        double_misses = 0
        for text in texts:
            ref = sp.encode(text)
            assert tok.encode(text, parse_special=False).ids == ref, text
            normalized = tok.normalize(text)
            double_misses += [i for i, _, _ in double.encode(normalized)] != ref
        assert double_misses > 0  # double sums (llama.cpp) do not reproduce sentencepiece here
