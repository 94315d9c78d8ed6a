"""Issue 19: a held ``▁`` followed by many skipped special tokens keeps its space.

A bare ``▁`` decodes to '' until text follows, so a stream holds it; the skipped specials
after it add nothing either. Settling that long held tail must not drop the ``▁``: llama-spm
ids ``[29871] + [1]*8 + [664]`` once streamed ``'work'`` where ``decode`` gives ``' work'``.
Checked for DecodeStream, the fixed window diff and the stop decoder (which skips specials
by default) on every vocabulary and engine.
"""
from __future__ import annotations

import pytest

from labkit.core import TOKEN_CONTROL
from labkit.streaming.decode_stream import DecodeStream
from labkit.streaming.stop import StopSequenceConfig, StopSequenceDecoder
from labkit.streaming.window_diff import WindowDiffDecoder

from support.engines import servable_pairs, tokenizer

PAIRS = servable_pairs()  # every bundled vocabulary with every engine that serves it


def silent_ids(tok) -> list[int]:
    """Ids that skip_special_tokens removes (text with specials kept, nothing without), the first two."""
    # only added and control tokens can be skipped: looking among them, not all 150k ids, finds the same two
    vocab = tok.vocab
    candidates = sorted({added.id for added in vocab.added_tokens}
                        | {index for index, kind in enumerate(vocab.token_types) if kind == TOKEN_CONTROL})
    found = []
    for index in candidates:
        if tok.decode([index], skip_special_tokens=True) == "" and tok.decode([index]) != "":
            found.append(index)
            if len(found) == 2:
                break
    return found


def space_then_word(tok) -> tuple[int, int]:
    """A lone space piece (``▁`` where the vocab has it) and a word that starts with a space."""
    space = tok.token_to_id("▁")
    if space is None:  # byte-level BPE has a space token; WordPiece has none (then a word)
        space = (tok.encode(" ", parse_special=False).ids or tok.encode("a", parse_special=False).ids)[-1]
    word = tok.encode("Hello work", parse_special=False).ids[-1]
    return space, word


def streamed(tok, ids) -> str:
    stream = DecodeStream(tok, skip_special_tokens=True)
    return "".join(stream.step_batch(ids)) + (stream.flush() or "")


def window_streamed(tok, ids) -> str:
    stream = WindowDiffDecoder(tok, (), True, k=4, fallback=True)
    return "".join(stream.step_batch(ids)) + (stream.flush() or "")


def stop_streamed(tok, ids) -> str:
    dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=["qzxq"]), skip_special_tokens=True)
    outs = dec.process_tokens(ids) + [dec.flush()]
    return "".join(getattr(out, "text", "") for out in outs)


def test_the_reported_llama_case():
    tok = tokenizer("llama-spm", "labkit")
    ids = [29871] + [1] * 8 + [664]
    assert tok.decode(ids, skip_special_tokens=True) == " work"
    assert streamed(tok, ids) == " work"
    assert stop_streamed(tok, ids) == " work"


@pytest.mark.parametrize("name,engine", PAIRS)
def test_held_space_survives_skipped_specials(name, engine):
    tok = tokenizer(name, engine)
    space, word = space_then_word(tok)
    for special in silent_ids(tok):
        for before in ([], [word]):
            for count in (1, 7, 8, 9, 17, 300):
                ids = before + [space] + [special] * count + [word]
                want = tok.decode(ids, skip_special_tokens=True)
                assert streamed(tok, ids) == want, (ids[:4], count)
                assert stop_streamed(tok, ids) == want, (ids[:4], count)
                assert window_streamed(tok, ids) == want, (ids[:4], count)


@pytest.mark.parametrize("name,engine", PAIRS)
def test_a_long_run_of_skipped_specials_keeps_the_window_small(name, engine):
    tok = tokenizer(name, engine)
    space, word = space_then_word(tok)
    for special in silent_ids(tok):
        stream = DecodeStream(tok, skip_special_tokens=True)
        stream.step_batch([space] + [special] * 5000 + [word])
        assert stream.max_window <= 24
