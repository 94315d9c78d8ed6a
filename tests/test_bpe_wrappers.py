"""The reference wrappers stay thin: an encode read for its ids only asks the library for ids
(offsets are made on first read), and what they then give equals the other references."""
from __future__ import annotations

import pytest

import labkit

NOT_NFC = ["e\u0301<|im_start|>\u0301x A\u030a", "a\u0899\u0898 cafe\u0301", "\u1100\u1161\u11a8 x\u0898\u0301e", "Å" * 50]


@pytest.mark.parametrize("text", NOT_NFC)
def test_tiktoken_nfc_vocab_matches_tokenizers_on_text_nfc_changes(text, tokenizer):
    mine, reference = tokenizer("qwen2", "tiktoken"), tokenizer("qwen2", "hf")
    for parse_special in (True, False):
        a, b = mine.encode(text, parse_special=parse_special), reference.encode(text, parse_special=parse_special)
        assert (a.ids, a.offsets) == (b.ids, b.offsets)


def test_tiktoken_ids_only_never_maps_offsets(monkeypatch):
    tok = labkit.load("qwen2", engine="tiktoken")

    def refuse(*args):
        raise AssertionError("the NFC char map was built for an ids-only encode")

    monkeypatch.setattr(tok, "_nfc_map_between_added", refuse)
    enc = tok.encode(NOT_NFC[0])
    assert enc.ids == labkit.load("qwen2", engine="labkit").encode(NOT_NFC[0]).ids
    with pytest.raises(AssertionError, match="char map"):
        enc.offsets


def test_sentencepiece_ids_only_never_asks_for_offsets(monkeypatch):
    tok = labkit.load("llama-spm", engine="sentencepiece")
    calls = []
    real = tok.backend.encode
    monkeypatch.setattr(tok.backend, "encode", lambda *a, **k: calls.append(k) or real(*a, **k))
    enc = tok.encode("Hello world")
    assert enc.ids == [15043, 3186] and calls == [{}]
    assert enc.offsets == [(0, 5), (5, 11)] and calls[-1].get("out_type") == "offset_mapping"
