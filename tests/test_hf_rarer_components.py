"""Nmt, the ByteLevel normaliser and the FixedLength pre-tokenizer (labkit/algorithms/
hf_normalize.py, hf_pretokenize.py) against tokenizers' own: every code point through each
normaliser, and FixedLength on random text with its offsets. Before labkit implemented them,
engine="labkit" refused every tokenizer.json that used one."""
from __future__ import annotations

import json
import random

import pytest
import tokenizers
from tokenizers import normalizers as N

import labkit
from labkit.algorithms.hf_normalize import NMT_DROPPED, NMT_SPACES, Piece, normalize
from labkit.algorithms.hf_pretokenize import pre_tokenize
from labkit.conformance.hf_json_configs import build_json, node
from labkit.core import FormatError
from labkit.formats.hf_components import flatten

ALL = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


@pytest.mark.parametrize("kind, reference", [("Nmt", N.Nmt()), ("ByteLevel", N.ByteLevel())])
def test_every_code_point_normalizes_as_in_tokenizers(kind, reference):
    """Each code point between two letters (so a dropped one and one read as a space both
    show), in blocks of 4,096 (offsets are checked through whole tokenizers below)."""
    for start in range(0, len(ALL), 4096):
        text = "".join(f"a{chr(cp)}b" for cp in ALL[start:start + 4096])
        ours = normalize(Piece.of(text), [{"type": kind}])
        assert ours.text == reference.normalize_str(text), (kind, hex(ALL[start]))


def test_nmt_tables_are_exactly_what_tokenizers_changes():
    reference = N.Nmt()
    dropped = {cp for cp in ALL if reference.normalize_str(chr(cp)) == ""}
    spaced = {cp for cp in ALL if cp != 0x20 and reference.normalize_str(chr(cp)) == " "}
    assert (dropped, spaced) == (NMT_DROPPED, NMT_SPACES) and (len(dropped), len(spaced)) == (30, 15)


@pytest.mark.parametrize("normalizer, pre", [
    (node("Nmt"), node("FixedLength", length=3)),
    (node("ByteLevel"), node("WhitespaceSplit")),
    ({"type": "Sequence", "normalizers": [node("Nmt"), node("NFKC"), node("ByteLevel")]}, node("FixedLength")),
    (None, {"type": "Sequence", "pretokenizers": [node("Whitespace"), node("FixedLength", length=2)]}),
])
def test_pieces_equal_tokenizers(normalizer, pre):
    """The normalised text's pieces (their offsets are checked through whole tokenizers below)."""
    reference = tokenizers.Tokenizer.from_str(build_json("wordlevel", normalizer=normalizer, pre_tokenizer=pre))
    rng = random.Random(3)
    alphabet = "ab c\t\n\x01\x7f\x8f\u200b\u2581\ufeff\ufffdé日本語😀\u0301 x"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        normalized = reference.normalizer.normalize_str(text) if reference.normalizer else text
        expected = reference.pre_tokenizer.pre_tokenize_str(normalized)
        piece = normalize(Piece.of(text), flatten(normalizer, "normalizer"))
        pieces = pre_tokenize([piece], flatten(pre, "pre_tokenizer"))
        assert [p.text for p in pieces] == [t for t, _ in expected], repr(text)


def test_fixed_length_pieces_carry_the_original_offsets(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(build_json("wordlevel", normalizer=node("Nmt"), pre_tokenizer=node("FixedLength", length=2)))
    ours, reference = labkit.load(path, engine="labkit"), tokenizers.Tokenizer.from_file(str(path))
    for text in ("abc\x01de\tf", "\x01\x01ab", "日本語😀x", ""):
        got, want = ours.encode(text), reference.encode(text, add_special_tokens=False)
        assert (got.ids, got.offsets) == (want.ids, [tuple(o) for o in want.offsets]), repr(text)


@pytest.mark.parametrize("length", [0, -1, "3", 2.5, None])
def test_a_fixed_length_that_is_not_a_positive_int_is_refused_by_every_engine(tmp_path, length):
    """tokenizers reads length 0 and then panics on every text; the others it cannot read."""
    doc = json.loads(build_json("wordlevel", pre_tokenizer=node("FixedLength", length=3)))
    doc["pre_tokenizer"]["length"] = length
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    for engine in (None, "labkit", "hf"):
        with pytest.raises(FormatError, match="FixedLength length should be a positive int"):
            labkit.load(path, engine=engine)
    if length == 0:  # the panic labkit spares its user
        with pytest.raises(BaseException, match="chunk size must be non-zero"):
            tokenizers.Tokenizer.from_file(str(path)).encode("abc")
