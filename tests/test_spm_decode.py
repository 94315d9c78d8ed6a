"""labkit's one SentencePiece decoder (labkit/algorithms/spm_decode.py) against both references.

Random id lists, rich in what makes decoding hard (<unk>, control ids, byte pieces, ``▁`` and
other pieces starting with ``▁``, user-defined pieces), are decoded by labkit's engines and by
the sentencepiece engine (a ``.model`` is decoded like sentencepiece) and, in the tokenizers
style, by the hf engine (GGUF and tokenizer.json are decoded like the ``tokenizers`` chain).
Besides the two botchan models, vocabularies derived from them add 256 byte pieces, a
user-defined and a control piece, and other whitespace flags: the decoder does not look at
scores, so only the piece table and the flags matter.
"""
from __future__ import annotations

import dataclasses
import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labkit
from support.engines import compared, loaded
from labkit.algorithms.spm_decode import SpmDecoder, bytes_all_or_nothing, default_style
from labkit.core import (TOKEN_BYTE, TOKEN_CONTROL, TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_USER_DEFINED, AddedToken, LabkitError,
                         VocabData)
from labkit.engines import hf, labkit_spm_bpe, labkit_unigram, sentencepiece_engine
from support.vocabs import t5_gguf_vocab

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPACE = "\u2581"
BOTCHAN = ["botchan-unigram", "botchan-bpe"]
# (add_dummy_prefix, remove_extra_whitespaces, treat_whitespace_as_suffix) besides the files' own
FLAGS = {"no-extra-ws": (True, False, False), "no-prefix": (False, True, False),
         "bare": (False, False, False), "suffix": (True, True, True)}


def with_bytes(vocab: VocabData) -> VocabData:
    """``vocab`` whose last 258 pieces become a user-defined piece, a control piece and the 256
    byte pieces, with byte fallback on (ids and scores otherwise as they were)."""
    n = len(vocab.tokens)
    tokens = list(vocab.tokens[: n - 258]) + ["<ud>", "<ctl>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = list(vocab.token_types[: n - 258]) + [TOKEN_USER_DEFINED, TOKEN_CONTROL] + [TOKEN_BYTE] * 256
    added = [*vocab.added_tokens, AddedToken(id=n - 258, content="<ud>", special=False),
             AddedToken(id=n - 257, content="<ctl>", special=True)]
    return dataclasses.replace(vocab, source=vocab.source + "+bytes", tokens=tokens, token_types=types,
                               added_tokens=added, options=dict(vocab.options, byte_fallback=True))


def with_flags(vocab: VocabData, label: str) -> VocabData:
    prefix, extra_ws, suffix = FLAGS[label]
    norm = dict(vocab.normalizer, add_dummy_prefix=prefix, remove_extra_whitespaces=extra_ws,
                treat_whitespace_as_suffix=suffix)
    return dataclasses.replace(vocab, source=f"{vocab.source}+{label}", normalizer=norm)


def derived_vocab(name: str, variant: str) -> VocabData:
    vocab = with_bytes(loaded(name, "sentencepiece").vocab)
    return vocab if variant == "bytes" else with_flags(vocab, variant)


@functools.lru_cache(maxsize=None)
def derived(name: str, variant: str) -> tuple[labkit.Tokenizer, labkit.Tokenizer]:
    """(labkit engine, sentencepiece engine) over a derived vocabulary."""
    vocab = derived_vocab(name, variant)
    own = labkit_unigram if "unigram" in name else labkit_spm_bpe
    return own.build(vocab), sentencepiece_engine.build(vocab)


@functools.lru_cache(maxsize=None)
def derived_hf(name: str, variant: str) -> labkit.Tokenizer:
    # tokenizers' conversion, asked for by name (the hf engine refuses .model files); it cannot
    # build treat_whitespace_as_suffix models (no Append normaliser)
    return hf.convert_model_file(derived_vocab(name, variant))


@functools.lru_cache(maxsize=None)  # one strategy per tokenizer: hypothesis redoes its setup for every new one
def hard_ids(tok: labkit.Tokenizer) -> st.SearchStrategy[list[int]]:
    """Id lists mixing any id with <unk>, specials, '▁' pieces, byte pieces and valid UTF-8 byte runs."""
    tokens, types = tok.vocab.tokens, tok.vocab.token_types
    specials = sorted({0, *(i for i, t in enumerate(types) if t == TOKEN_CONTROL), *(a.id for a in tok.vocab.added_tokens)})
    spaces = [i for i, t in enumerate(tokens) if t.startswith(SPACE) and types[i] == TOKEN_NORMAL]
    bare = [i for i, t in enumerate(tokens) if t.strip(SPACE) == ""]
    byte_of = {t: i for i, t in enumerate(tokens) if types[i] == TOKEN_BYTE}
    choices = [st.integers(0, len(tokens) - 1), st.sampled_from(specials), st.sampled_from(spaces[:40])]
    if bare:
        choices.append(st.sampled_from(bare))
    one = st.one_of(choices).map(lambda i: [i])
    parts = [one, one, st.sampled_from(bare).map(lambda i: [i, i]) if bare else one]
    if byte_of:
        byte_ids = sorted(byte_of.values())
        parts.append(st.lists(st.sampled_from(byte_ids), min_size=1, max_size=4))
        # a whole character as byte pieces (a valid run), sometimes cut short
        parts.append(st.tuples(st.characters(exclude_categories=("Cs",)), st.booleans()).map(
            lambda pair: [byte_of[f"<0x{b:02X}>"] for b in pair[0].encode("utf-8")][: None if pair[1] else -1] or [byte_of["<0x41>"]]
        ))
    return st.lists(st.one_of(parts), max_size=6).map(lambda groups: [i for g in groups for i in g])


def check_same(ours: labkit.Tokenizer, reference: labkit.Tokenizer, ids: list[int]) -> None:
    for skip in (False, True):
        assert ours.decode(ids, skip_special_tokens=skip) == reference.decode(ids, skip_special_tokens=skip), (
            [ours.vocab.tokens[i] for i in ids], skip)


# ----------------------------------------------------------------------------- like sentencepiece


@pytest.mark.parametrize("name", BOTCHAN)
@SETTINGS
@given(data=st.data())
def test_shipped_model_decodes_like_sentencepiece(name, data):
    ours, sp = loaded(name, "labkit"), loaded(name, "sentencepiece")
    assert ours.decoder.style == "sentencepiece"
    check_same(ours, sp, data.draw(hard_ids(ours)))


@pytest.mark.parametrize("variant", ["bytes", *FLAGS])
@pytest.mark.parametrize("name", BOTCHAN)
@SETTINGS
@given(data=st.data())
def test_derived_models_decode_like_sentencepiece(name, variant, data):
    ours, sp = derived(name, variant)
    check_same(ours, sp, data.draw(hard_ids(ours)))


@pytest.mark.parametrize("name", BOTCHAN)
def test_leading_space_pieces_follow_sentencepiece(name):
    # H11's case: with remove_extra_whitespaces sentencepiece drops every leading '▁' until text comes out
    ours, sp, ref_hf = loaded(name, "labkit"), loaded(name, "sentencepiece"), compared(name, "hf")
    ids = [ours.token_to_id(t) for t in ["▁", "▁", "▁a"]]
    assert ours.decode(ids) == sp.decode(ids) == "a"
    assert ref_hf.decode(ids) == "  a"
    assert ours.decode([1, *ids]) == sp.decode([1, *ids]) == "<s> a"
    # a skipped <s> at the start leaves nothing before the run: no space is put back
    assert ours.decode([1, *ids], skip_special_tokens=True) == sp.decode([1, *ids], skip_special_tokens=True) == "a"
    # a skipped <s> after text: sentencepiece drops it where it stands, so the '▁'s after it
    # are spaces (text has come out); decoding the runs apart gave "a a"
    both = [ids[-1], 1, *ids]
    assert ours.decode(both, skip_special_tokens=True) == sp.decode(both, skip_special_tokens=True) \
        == sp.backend.decode(both) == "a   a"


def test_botchan_unigram_ids_4_4_11():
    ours = loaded("botchan-unigram", "labkit")
    assert [ours.vocab.tokens[i] for i in (4, 4, 11)] == ["▁", "▁", "▁a"]
    assert ours.decode([4, 4, 11]) == loaded("botchan-unigram", "sentencepiece").backend.decode([4, 4, 11]) == "a"


def test_unknown_and_bytes_by_the_sentencepiece_rules():
    ours, sp = derived("botchan-unigram", "bytes")
    ref_hf = derived_hf("botchan-unigram", "bytes")
    ids = [ours.token_to_id(t) for t in ["<unk>", "<0xE3>", "<0x99>", "<0x41>"]]
    # <unk> reads ' ⁇ '; a malformed byte run gives one U+FFFD per bad byte, per character
    assert ours.decode(ids) == sp.decode(ids) == " \u2047 \ufffd\ufffdA"
    assert ref_hf.decode(ids) == "<unk>\ufffd\ufffd\ufffd"


# ----------------------------------------------------------------------------- like tokenizers


@pytest.mark.parametrize("name", BOTCHAN)
@SETTINGS
@given(data=st.data())
def test_hf_style_is_the_tokenizers_chain(name, data):
    # the same .model, decoded by SpmDecoder in the tokenizers style and by the hf engine
    ref_hf = compared(name, "hf")
    decoder = SpmDecoder.from_vocab(ref_hf.vocab, style="hf")
    ids = data.draw(hard_ids(ref_hf))
    for skip in (False, True):
        assert decoder.decode(ids, skip) == ref_hf.decode(ids, skip_special_tokens=skip)


@pytest.mark.parametrize("variant", ["bytes", "no-prefix", "bare"])
@SETTINGS
@given(data=st.data())
def test_hf_style_on_derived_models(variant, data):
    ours, ref_hf = derived("botchan-unigram", variant)[0], derived_hf("botchan-unigram", variant)
    decoder = SpmDecoder.from_vocab(ours.vocab, style="hf")
    ids = data.draw(hard_ids(ours))
    for skip in (False, True):
        assert decoder.decode(ids, skip) == ref_hf.decode(ids, skip_special_tokens=skip)


# a "llama" GGUF decodes as llama.cpp does, not as tokenizers: tests/test_llama_spm_gguf.py


@functools.lru_cache(maxsize=None)
def t5_gguf() -> labkit.Tokenizer:
    """labkit over the derived botchan-unigram (byte pieces) written under t5 GGUF keys, without
    the charsmap (decoding never reads it); the hf engine refuses every t5 GGUF."""
    return labkit_unigram.build(t5_gguf_vocab(with_bytes(loaded("botchan-unigram", "sentencepiece").vocab), charsmap=False))


# a t5 GGUF decodes as llama.cpp does, not as tokenizers: tests/test_conformance_random_gguf_ugm.py


def test_unigram_gguf_unknown_token_is_hidden_with_the_specials():
    # llama.cpp hides unknown tokens as it hides control ones (llama_token_to_piece, special=false)
    ours = t5_gguf()
    unk = ours.vocab.token_types.index(TOKEN_UNKNOWN)
    assert (ours.decode([unk]), ours.decode([unk], skip_special_tokens=True)) == (ours.vocab.tokens[unk], "")


# ----------------------------------------------------------------------------- the pieces


def test_default_style_follows_the_format():
    assert default_style(loaded("botchan-bpe", "labkit").vocab) == "sentencepiece"
    assert default_style(loaded("llama-spm", "labkit").vocab) == "hf"
    assert loaded("botchan-bpe", "labkit").decoder.style == loaded("botchan-unigram", "labkit").decoder.style == "sentencepiece"


def test_bytes_all_or_nothing():
    assert bytes_all_or_nothing("é".encode()) == "é"
    assert bytes_all_or_nothing(b"\xe3\x99a") == "\ufffd" * 3


def test_unknown_style_is_refused():
    with pytest.raises(LabkitError, match="decode style"):
        SpmDecoder(loaded("botchan-bpe", "labkit").vocab, style="llama.cpp")
