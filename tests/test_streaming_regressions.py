"""Counterexamples found by random sweeps after the streaming work landed, kept as tests.

On llama-spm the hf and labkit decoders render a run of <0xNN> pieces all or nothing, and
skipped special tokens vanish before the decoder runs, so a window must never start inside
a run (silent ids included), and a held id's context must not be blind."""
from __future__ import annotations

import pytest

import labkit
from support.engines import compared
from labkit.streaming.decode_stream import DecodeStream, run_clean_start
from labkit.streaming.window_diff import WindowDiffDecoder

CASES = [
    # (prompt, ids, skip_special_tokens): what went wrong before
    ([198, 162, 229, 131, 151], [198, 162], False),  # a K=4 window cut the run C3 9F E2 80 94 C3 9F
    ([0, 2, 144, 2, 92, 2, 2, 54], [1, 49, 22153, 243, 2], True),  # the prompt's run crosses skipped </s>
    ([14280, 2, 198, 176, 2, 2, 1, 2, 1], [131, 0, 28974], True),
    ([13602, 198, 1, 2, 1, 2, 1], [84, 0, 129, 1, 2], True),
    ([2, 61, 1, 0, 2, 1, 1, 2], [1, 6389, 1], True),  # held id with only skipped specials as context
]


def expected(tok, prompt, ids, skip):
    full = tok.decode(prompt + ids, skip_special_tokens=skip)
    return full[len(tok.decode(prompt, skip_special_tokens=skip)):]


@pytest.mark.parametrize("engine", ["labkit", "hf", "sentencepiece"])
@pytest.mark.parametrize("prompt,ids,skip", CASES)
def test_window_diff_and_decode_stream_on_found_counterexamples(engine, prompt, ids, skip):
    tok = compared("llama-spm", engine)  # hf: tokenizers' reading, which engine="hf" refuses to serve
    want = expected(tok, prompt, ids, skip)
    window = WindowDiffDecoder(tok, prompt, skip, k=4, fallback=True)
    assert "".join(window.step_batch(ids)) + (window.flush() or "") == want
    stream = DecodeStream(tok, prompt, skip_special_tokens=skip)
    assert "".join(stream.step_batch(ids)) + (stream.flush() or "") == want


def test_run_clean_start_treats_silent_ids_as_part_of_a_run():
    byte_ids, silent = {10, 11, 12}, {0}
    assert run_clean_start([5, 10, 11, 12], 2, 0, byte_ids, silent.__contains__) == 1
    assert run_clean_start([5, 10, 0, 11], 3, 0, byte_ids, silent.__contains__) == 1
    assert run_clean_start([5, 10, 0, 7], 2, 0, byte_ids, silent.__contains__) == 2  # the window opens on text
    assert run_clean_start([10, 11, 12], 2, 1, byte_ids, silent.__contains__) == 1  # never past the floor
    assert run_clean_start([10, 11], 1, 0, frozenset(), silent.__contains__) == 1  # not run-sensitive


@pytest.mark.parametrize("name", ["botchan-unigram", "botchan-bpe"])
@pytest.mark.parametrize("engine", ["labkit", "sentencepiece"])
def test_a_chunk_that_reads_as_nothing_keeps_earlier_context(name, engine):
    """sentencepiece strips leading ▁ pieces: after '<unk>' '▁' the window [▁] decodes to ''
    and ' the' would come out as 'the' without the context before it."""
    tok = labkit.load(name, engine=engine)
    ids = [tok.token_to_id("<unk>"), tok.token_to_id("▁"), tok.token_to_id("▁the"), tok.token_to_id("<unk>")]
    assert None not in ids
    stream = DecodeStream(tok)
    assert "".join(stream.step_batch(ids)) + (stream.flush() or "") == tok.decode(ids)
