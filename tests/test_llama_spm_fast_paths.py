"""The llama-spm engine's fast paths (ids without spans, word and chunk caches, long words cut
where no merge can cross, runs of digits looked up) give what llama.cpp's loop gives on the
whole stretch: the same ids and offsets, cold and warm, ids read first or offsets first."""
from __future__ import annotations

import random

import pytest

import labkit
from labkit.algorithms.llama_spm import LlamaSpm, tokens_merges_make
from labkit.conformance import random_gguf_spm as rgs
from labkit.core import LabkitError
from labkit.engines.labkit_llama_spm import CACHED_WORD_CHARS, ISOLATED_RUN_CHARS


def plain_reference(tok):
    """The same engine with no word cut, no chunks, no cache, no sentencepiece loop: llama.cpp's
    heap loop over each whole stretch, offsets through the engine's own alignment."""
    ref = type(tok)(tok.vocab)
    plain = LlamaSpm(tok.vocab.tokens, tok.vocab.scores)
    plain.symbols = plain._merged  # the heap loop at every length (no rescan)
    ref._words = None
    ref._llama_word = lambda word: tuple(plain.encode_spans(word))
    return ref


def answers(tok, text, add_special_tokens, parse_special):
    """(ids, offsets) four ways: encode() (ids by the ids-only path, offsets on first read) and
    the eager spans pass alone, each with the caches cleared first and again warm."""
    out = []
    for eager in (False, True):
        for cold in (True, False):
            if cold:
                tok.clear_cache()
            if eager:
                encoding = tok._encode_eagerly(text, add_special_tokens, parse_special)
            else:
                encoding = tok.encode(text, add_special_tokens=add_special_tokens, parse_special=parse_special)
            out.append((encoding.ids, encoding.offsets))
    return out


def check(tok, ref, text):
    # the default (added tokens matched, no BOS), and BOS with added-token spellings as text
    for add_special_tokens, parse_special in ((False, True), (True, False)):
        try:
            expected = ref._encode_eagerly(text, add_special_tokens, parse_special)
        except LabkitError:
            with pytest.raises(LabkitError):
                tok.encode(text, add_special_tokens=add_special_tokens, parse_special=parse_special).ids
            continue
        for ids, offsets in answers(tok, text, add_special_tokens, parse_special):
            assert ids == expected.ids, text[:80]
            assert offsets == expected.offsets, text[:80]


def llama_texts(rng: random.Random, count: int) -> list[str]:
    """Random text of letters, digits (long runs too), spaces, '▁', characters llama-spm spells
    only by bytes (emoji, rare CJK), added tokens, and long words past the word cache."""
    units = ["a", "e", "t", "th", "ing", "▁", " ", "  ", "\n", "0", "7", "2024", "9" * (ISOLATED_RUN_CHARS + 3),
             "🦙", "😀", "鑫", "珫", "中文", "é", "<s>", "</s>", "<unk>", "<0x41>", ".", "Hello", "x" * 40]
    out = []
    for _ in range(count):
        size = rng.choice((3, 20, 80, CACHED_WORD_CHARS + 50))
        text = "".join(rng.choice(units) for _ in range(size))
        if rng.random() < 0.5:  # one long word without spaces
            text = text.replace(" ", "").replace("\n", "")
        out.append(text)
    return out


def test_llama_spm_fast_paths_match_the_plain_loop():
    tok = labkit.load("llama-spm", engine="labkit")
    assert tok.llama.fast_merge is not None  # the sentencepiece loops stand in here
    ref = plain_reference(tok)
    for text in llama_texts(random.Random(11), 120):
        check(tok, ref, text)
    # long runs no merge joins, of tokens only and with characters spelled by bytes, in long words
    for text in ["9" * 300, "12" * 20 + "🦙" + "7" * 20 + "鑫" * 20 + "ab" * 150, "x" + "中文😀" * 100 + "0" * 17]:
        check(tok, ref, text)


def test_llama_spm_bench_shapes_match_the_plain_loop():
    from labkit.bench.texts import bench_texts, long_texts

    tok = labkit.load("llama-spm", engine="labkit")
    ref = plain_reference(tok)
    texts = {**long_texts(0.003), **bench_texts(0.003)}
    for name, text in texts.items():
        check(tok, ref, text)


@pytest.mark.parametrize("seed", [0, 1, 3, 5, 8, 13, 21, 34])
def test_random_gguf_fast_paths_match_the_plain_loop(tmp_path, seed):
    """Random "llama" GGUFs (several where only llama.cpp's heap loop is exact), texts glued
    into long words so that the chunked path runs."""
    drawn = rgs.draw_file(seed)
    try:
        tok = labkit.load(rgs.write_file(drawn, tmp_path), engine="labkit")
    except LabkitError:
        pytest.skip("labkit refuses this file, as llama.cpp cannot load it")
    ref = plain_reference(tok)
    rng = random.Random(seed)
    pieces = rgs.texts_for(drawn, 40)
    texts = pieces + ["".join(rng.sample(pieces, len(pieces))) * 3,
                      "".join(rng.sample(pieces, len(pieces))).replace(" ", "") * 3]
    for text in texts:
        check(tok, ref, text)


def test_a_merge_makes_only_tokens_two_symbols_spell():
    # no two symbols spell '<0x41>': the digits in it never join, so they are cut and isolated
    tokens = ["a", "b", "ab", "abb", "<0x41>", "1", "2"]
    assert tokens_merges_make(tokens) == {"ab", "abb"}
    spm = LlamaSpm(tokens, [0, 0, -1, -2, 0, 0, 0])
    assert spm.cut("abb12ab") == ["abb", "1", "2", "ab"]
    assert spm.isolated_runs("ab12ab") == ["ab", "12", "ab"]
    assert spm.encode_ids("abb12ab") == spm.encode("abb12ab") == [3, 5, 6, 2]
    assert spm.encode_ids("aA") == spm.encode("aA") == [0, 4]  # 'A' by its byte token
    with pytest.raises(LabkitError):
        spm.encode_ids("ac")  # no token, no byte token: llama.cpp ends its process
    # '<0' is made, so '0' joins and is not isolated; '1' is
    spm = LlamaSpm(["<", "0", "<0", "1"], [0, 0, 0, 0])
    assert spm.isolated_runs("01") == ["0", "1", ""] and spm.cut("<01") == ["<0", "1"]
    # no token longer than a character: nothing ever joins, a character without a token included
    assert LlamaSpm(["a", "b"], [0, 0]).isolated_runs("ab\n") == ["", "ab\n", ""]


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3, 5, 8, 13])
def test_the_rescan_of_a_short_text_is_the_heap_loop(tmp_path, seed):
    """llama-spm, then random GGUFs (tied, zero and shuffled scores among them)."""
    if seed is None:
        vocab = labkit.load("llama-spm", engine="labkit").vocab
        alphabet = list("▁▁▁abcdefghijklmnopqrstuvwxyzTHE0123456789<>/sé中文😀")
    else:
        drawn = rgs.draw_file(seed)
        vocab = labkit.load(rgs.write_file(drawn, tmp_path), engine="labkit").vocab
        alphabet = sorted({ch for t in drawn.tokens for ch in t}) + ["▁"] * 5
    spm = LlamaSpm(vocab.tokens, vocab.scores)
    assert spm._places is not None
    rng = random.Random(seed)
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 64)))
        assert spm._rescan(text) == spm._merged(text), text
