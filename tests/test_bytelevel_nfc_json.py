"""A Qwen2-shaped tokenizer.json (NFC, Qwen2's Split regex, ByteLevel): labkit's byte-level BPE
engine serves it (not the slower component-by-component one), exactly as tokenizers does on text
made to stress NFC: combining marks, Hangul jamo, compatibility characters and special tokens
glued to them, with special tokens parsed and not."""
from __future__ import annotations

import random

import pytest

import labkit

ATOMS = ["e", "\u0301", "\u0308", "a", " ", "\n", "\u1100", "\u1161", "\u11a8", "가", "Å", "A\u030a", "\u212b",
         "<|im_end|>", "<|im_start|>", "<|endoftext|>", "日本", "😀", "\ufb01", "1", "  ", "\t", "\u0344", "\u0958",
         "\u2126", "x"]


@pytest.fixture(scope="module")
def qwen2_json(tmp_path_factory):
    folder = tmp_path_factory.mktemp("qwen2-json")
    (folder / "tokenizer.json").write_text(labkit.load("qwen2", engine="hf").backend.to_str(), encoding="utf-8")
    return folder


def test_served_by_the_byte_level_engine(qwen2_json):
    tok = labkit.load(qwen2_json, engine="labkit")
    assert type(tok).__name__ == "ByteLevelBPE" and tok.vocab.normalizer.get("nfc")
    assert labkit.load(qwen2_json).engine == "labkit"


def test_equal_to_tokenizers_on_nfc_stress_text(qwen2_json):
    tok = labkit.load(qwen2_json, engine="labkit")
    ref = labkit.load(qwen2_json, engine="hf")
    rng = random.Random(3)
    texts = ["".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 12))) for _ in range(1500)]
    changed = 0
    for text in texts:
        for parse_special in (True, False):
            ours, theirs = tok.encode(text, parse_special=parse_special), ref.encode(text, parse_special=parse_special)
            assert (ours.ids, ours.tokens, ours.offsets) == (theirs.ids, theirs.tokens, theirs.offsets), (text, parse_special)
        assert tok.decode(ours.ids) == ref.decode(ours.ids)
        changed += text != __import__("unicodedata").normalize("NFC", text)
    assert changed > 300  # NFC changes many of these texts: the check is not vacuous
