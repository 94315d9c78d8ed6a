"""The reference engines one by one (hf, tiktoken, sentencepiece, mock) and the span drawing.

Expected values here come from the original libraries' documented behaviour or from the
files themselves (GPT-2's merge list, llama's scores), never from the code under test.
"""
from __future__ import annotations

import dataclasses

import pytest
import tokenizers

import labkit
from labkit.algorithms.bpe_merges import merges_from_ranks, spm_merges_from_scores
from support.engines import compared, loaded
from support.vocabs import t5_gguf_vocab
from labkit.core import TOKEN_NORMAL, EngineUnavailable, Encoding, LabkitError
from labkit.engines import hf, labkit_unigram, mock, sentencepiece_engine, tiktoken_engine
from labkit.engines.mock import mock_tokenizer, mock_vocab
from labkit.viz.spans import TokenSpans, token_spans, visible


# ----------------------------------------------------------------------------- mock


def test_mock_is_character_level_with_specials():
    tok = mock_tokenizer()
    assert tok.engine == "mock" and tok.backend is None
    assert tok.encode("ab").ids == [74, 75]  # 6 specials + <tool> + tab/newline + 0x20..0x60
    assert tok.encode("ab", add_special_tokens=True).ids == [1, 74, 75]
    assert tok.encode("a<|end|>", parse_special=True).tokens == ["a", "<|end|>"]
    assert tok.encode("a<|end|>", parse_special=False).tokens == list("a<|end|>")
    # user-defined added tokens are matched whatever parse_special says
    assert tok.encode("<tool>", parse_special=False).ids == [6]
    assert tok.encode("é").tokens == ["<unk>"]
    enc = tok.encode("x<s>y")
    assert enc.offsets == [(0, 1), (1, 4), (4, 5)]
    assert tok.decode(enc.ids) == "x<s>y"
    assert tok.decode(enc.ids, skip_special_tokens=True) == "xy"


def test_mock_eos_and_errors():
    tok = mock.build(mock_vocab(add_bos=False, add_eos=True))
    assert tok.encode("a", add_special_tokens=True).tokens == ["a", "</s>"]
    with pytest.raises(LabkitError, match="unknown id"):
        tok.decode([tok.vocab_size])
    with pytest.raises(EngineUnavailable):
        mock.build(loaded("gpt2", "hf").vocab)


# ----------------------------------------------------------------------------- hf


def test_hf_minilm_has_padding_and_truncation_off():
    tok = loaded("minilm", "hf")
    assert tok.backend.padding is None and tok.backend.truncation is None
    enc = tok.encode("word " * 300, add_special_tokens=True)
    assert len(enc.ids) == 302 and enc.ids[0] == 101 and enc.ids[-1] == 102
    assert 0 not in enc.ids  # no [PAD]


def test_hf_framing_follows_the_model():
    assert loaded("minilm", "hf").encode("hello", add_special_tokens=True).tokens == ["[CLS]", "hello", "[SEP]"]
    assert compared("llama-spm", "hf").encode("Hello", add_special_tokens=True).ids == [1, 15043]
    assert loaded("gpt2", "hf").encode("Hello", add_special_tokens=True).ids == [15496]


def test_hf_parse_special():
    tok = loaded("qwen2", "hf")
    assert tok.encode("<|im_end|>", parse_special=True).ids == [151645]
    plain = tok.encode("<|im_end|>", parse_special=False).ids
    assert 151645 not in plain and len(plain) > 1
    # qwen2's [PADnnn] pieces are user-defined (non-special): matched either way
    assert tok.encode("[PAD151646]", parse_special=False).ids == [151646]
    assert tok.decode([151645, 9707], skip_special_tokens=True) == "Hello"
    assert tok.decode([151645, 9707]) == "<|im_end|>Hello"


def test_hf_spm_merges_from_scores_follow_the_scores():
    vocab = loaded("llama-spm").vocab
    merges = spm_merges_from_scores(vocab)
    ids = {t: i for i, t in enumerate(vocab.tokens)}
    # llama's best-scored two-character pieces are '▁t', 'er', 'in' (ids 260, 261, 262)
    assert merges[:3] == [("▁", "t"), ("e", "r"), ("i", "n")]
    scores = [vocab.scores[ids[a + b]] for a, b in merges]
    assert scores == sorted(scores, reverse=True)
    assert all(vocab.token_types[ids[a + b]] == TOKEN_NORMAL for a, b in merges[:5000])


@pytest.mark.parametrize("short_token_bytes", [32, 0])  # rescanning short tokens, or the heap for every one
def test_hf_merges_from_ranks_rebuild_gpt2s_merge_list(monkeypatch, short_token_bytes):
    # GPT-2's file has both: token i >= 256 is made by merge i - 256, so ranks = ids
    import labkit.algorithms.bpe_merges as bpe_merges

    monkeypatch.setattr(bpe_merges, "SHORT_TOKEN_BYTES", short_token_bytes)
    vocab = loaded("gpt2", "hf").vocab
    from labkit.algorithms.bytes_unicode import gpt2_to_bytes

    token_bytes = [gpt2_to_bytes(t) if ty == TOKEN_NORMAL else None for t, ty in zip(vocab.tokens, vocab.token_types)]
    assert merges_from_ranks(token_bytes) == list(vocab.merges)


def test_hf_decode_invalid_utf8_is_replacement_char():
    gpt2 = loaded("gpt2", "hf")
    first_byte_of_emoji = gpt2.encode("😀").ids[:1]
    assert gpt2.decode(first_byte_of_emoji) == "\ufffd"
    assert compared("llama-spm", "hf").decode([243]) == "\ufffd"  # <0xF0> alone


def test_hf_unigram_names_unknowns_by_the_vocab_spelling():
    tok = hf.convert_model_file("botchan-unigram")
    enc = tok.encode("<unk> 日")
    assert enc.tokens == ["▁", "<unk>", "un", "k", "<unk>", "▁", "<unk>"]
    assert tok.decode(enc.ids) == "<unk>unk<unk> <unk>"


def test_hf_build_errors_are_labkit_errors():
    vocab = loaded("gpt2", "hf").vocab
    broken = dataclasses.replace(vocab, merges=[("no-such", "token"), *vocab.merges[1:]])
    with pytest.raises(LabkitError):
        hf.build(broken)
    duplicated = dataclasses.replace(vocab, tokens=["!", *vocab.tokens[1:]] if vocab.tokens[0] != "!" else ["\"", *vocab.tokens[1:]])
    with pytest.raises(LabkitError):
        hf.build(duplicated)
    with pytest.raises(LabkitError):
        hf.build(dataclasses.replace(vocab, pre="no-such-pre"))


@pytest.mark.parametrize("name,engine", [("gpt2", "hf"), ("gpt2", "tiktoken"), ("llama-spm", "sentencepiece"),
                                         ("botchan-unigram", "sentencepiece"), ("minilm", "hf")])
def test_lone_surrogates_are_labkit_errors(name, engine):
    with pytest.raises(LabkitError):
        loaded(name, engine).encode("a\ud800b")


def test_gguf_unigram_t5_is_served_like_the_model_file():
    # the botchan Unigram model's arrays under GGUF keys: labkit (llama.cpp's t5 loop) serves it exactly like
    # the .model file; the sentencepiece engine refuses every t5 GGUF (llama.cpp's loop is its own)
    vocab = t5_gguf_vocab(loaded("botchan-unigram", "sentencepiece").vocab)
    with pytest.raises(EngineUnavailable, match="t5 tokenizer runs a Unigram loop of its own.*engine='labkit'"):
        sentencepiece_engine.build(vocab)
    engines = [labkit_unigram.build(vocab), loaded("botchan-unigram", "sentencepiece")]
    for text in ["Hello  world ", "ｈｅｌｌｏ ﬁ", " a\tb\n", "<s> x </s>", "日本", "x \u1100\u1161\u3133 y"]:
        # a GGUF matches control spellings in text as llama.cpp does; a .model never (sentencepiece)
        for parse_special in (True, False) if "<s>" not in text else (False,):
            results = {tuple(t.encode(text, parse_special=parse_special).ids) for t in engines}
            assert len(results) == 1, (text, results)
    with pytest.raises(EngineUnavailable, match="grapheme cluster"):
        hf.build(vocab)


def test_tokenizers_precompiled_does_not_match_across_grapheme_clusters():
    # why the hf engine refuses a t5 GGUF with a charsmap: when this fails, tokenizers matches like
    # llama.cpp and sentencepiece, and the refusal (hf.GGUF_CHARSMAP_REFUSAL) can be lifted
    import sentencepiece
    from tokenizers import normalizers

    model = loaded("botchan-unigram", "sentencepiece")
    blob = model.vocab.normalizer["charsmap"]
    text = "\u1100\u1161\u3133"  # one key of nmt_nfkc, two grapheme clusters
    assert model.backend.normalize(text) == "\u2581\uac03"
    assert normalizers.Precompiled(blob).normalize_str(text) == "\u1100\u1161\u11aa"
    assert isinstance(model.backend, sentencepiece.SentencePieceProcessor)
    assert labkit_unigram.build(t5_gguf_vocab(model.vocab)).encode(text).ids == model.encode(text).ids


# ----------------------------------------------------------------------------- tiktoken


def test_tiktoken_needs_one_regex():
    with pytest.raises(EngineUnavailable, match="regexes in sequence"):
        labkit.load("gpt2", engine="tiktoken", pre="falcon")


def test_tiktoken_refuses_ids_that_are_not_ranks():
    vocab = loaded("gpt2", "hf").vocab
    merges = list(vocab.merges)
    merges[10], merges[11] = merges[11], merges[10]
    with pytest.raises(EngineUnavailable, match="cannot serve as tiktoken ranks"):
        tiktoken_engine.build(dataclasses.replace(vocab, merges=merges))
    with pytest.raises(EngineUnavailable):
        tiktoken_engine.build(loaded("llama-spm").vocab)


def test_tiktoken_nfc_and_offsets_into_the_original_text():
    tok = loaded("qwen2", "tiktoken")
    decomposed = tok.encode("e\u0301!")
    assert decomposed.ids == tok.encode("\u00e9!").ids == loaded("qwen2", "hf").encode("e\u0301!").ids
    # tokenizers puts the composed é on the e it starts from (issue 19)
    assert decomposed.offsets == [(0, 1), (2, 3)] == [tuple(o) for o in loaded("qwen2", "hf").encode("e\u0301!").offsets]


def test_tiktoken_special_tokens_and_holes():
    tok = loaded("cl100k_base", "tiktoken")
    assert tok.encode("<|endoftext|>").ids == [100257]
    assert 100257 not in tok.encode("<|endoftext|>", parse_special=False).ids
    # 100256 is a hole in cl100k's ranks: both engines spell it by its placeholder
    assert tok.decode([100256, 9906]) == loaded("cl100k_base", "hf").decode([100256, 9906]) == "<|unused_100256|>Hello"


# ----------------------------------------------------------------------------- sentencepiece


def test_sentencepiece_serves_gguf_through_a_model_proto():
    tok = loaded("llama-spm", "sentencepiece")
    assert tok.backend.get_piece_size() == 32000
    assert tok.encode(" Hello").ids == [29871, 15043]
    assert tok.decode([1, 15043]) == "<s> Hello"  # control ids spelled, as llama.cpp does
    # a GGUF decodes as llama.cpp does: a hidden leading <s> leaves the next token its space
    assert tok.decode([1, 15043], skip_special_tokens=True) == " Hello"
    assert tok.decode([248, 157, 77, 244, 179]) == "\ufffd\ufffdJ\ufffd"  # one U+FFFD per bad sequence, as llama.cpp
    with pytest.raises(EngineUnavailable):
        sentencepiece_engine.build(loaded("bert-bge").vocab)


def test_sentencepiece_keeps_its_own_unknown_surface():
    # sentencepiece decodes <unk> as " ⁇ " (its unk_surface); tokenizers spells "<unk>"
    tok = loaded("botchan-unigram", "sentencepiece")
    enc = tok.encode("日")
    assert enc.tokens == ["▁", "<unk>"]
    assert tok.decode(enc.ids) == " \u2047 "


# ----------------------------------------------------------------------------- exercises (notebook 00)


def test_tour_checkers_say_right_and_wrong(capsys):
    from labkit.exercises.tour import check_fewest_tokens, check_round_trip, check_token_count, check_tokens

    assert check_token_count("cl100k_base", "Hello world", 2) and not check_token_count("cl100k_base", "Hello world", 3)
    assert check_tokens("llama-spm", " Hello", ["▁", "▁Hello"])
    assert check_fewest_tokens("    indented", "bert-bge", ["gpt2", "bert-bge"])
    assert not check_fewest_tokens("    indented", "gpt2", ["gpt2", "bert-bge"])
    assert check_round_trip("bert-bge", "hello world", True) and check_round_trip("bert-bge", "Hello", False)
    out = capsys.readouterr().out.split("\n")
    assert out[:3] == ["right", out[1], "right"] and out[1].startswith("wrong:")
    with pytest.raises(LabkitError):
        check_token_count("no-such-model", "x", 1)


# ----------------------------------------------------------------------------- spans


def test_spans_text_fallback_and_html():
    drawing = token_spans(loaded("gpt2", "hf"), "Hello world\n!")
    assert repr(drawing) == "Hello|·world|↵|!"
    page = drawing._repr_html_()
    assert page == token_spans(loaded("gpt2", "hf"), "Hello world\n!")._repr_html_()  # deterministic
    assert 'title="15496:Hello"' in page and 'title="995:Ġworld"' in page
    assert "↵<br>" in page and "id=" not in page


def test_spans_group_bytes_of_one_character_and_show_framing():
    drawing = token_spans(loaded("gpt2", "hf"), "😀", title="emoji")
    (span,) = drawing.spans
    assert span.text == "😀" and len(span.ids) == 2 and drawing.n_tokens == 2
    assert repr(drawing) == "emoji (2 tokens): 😀"
    # GPT-2 cuts " 😀" into " " + 3 bytes, then the last byte: the second token's char is already drawn
    split = token_spans(loaded("gpt2", "hf"), " naïve 😀")
    assert repr(split) == "·naïve|·😀" and split.spans[-1].tokens == ("ĠðŁĺ", "Ģ")
    bert = token_spans(loaded("minilm", "hf"), "Hi  <b>", add_special_tokens=True)
    assert repr(bert) == "«[CLS]»|Hi|(··)|<|b|>|«[SEP]»"
    assert "&lt;" in bert._repr_html_() and "dashed" in bert._repr_html_()


def test_spans_reject_bad_input():
    with pytest.raises(LabkitError):
        TokenSpans.from_encoding(Encoding([1], ["x"], [(0, 5)]), "abc")
    with pytest.raises(LabkitError):
        TokenSpans.from_encoding([1, 2], "abc")
    assert visible("a\tb\x00") == "a→b\\x00"


def test_backend_is_the_library_object():
    assert isinstance(loaded("gpt2", "hf").backend, tokenizers.Tokenizer)
