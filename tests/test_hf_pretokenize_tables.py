"""labkit's tokenizer.json pre-tokenizers against tokenizers' own on every kind of code point:
Punctuation and BertPreTokenizer test punctuation with tokenizers' tables (older than Python's),
Digits tests numbers with Rust's (newer); labkit keeps both, measured."""
from __future__ import annotations

import unicodedata

import pytest
from tokenizers import pre_tokenizers as P

from labkit.algorithms.hf_normalize import Piece
from labkit.algorithms.hf_pretokenize import NUMERIC_EXTRA_RANGES, _is_numeric, pre_tokenize

ALL = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
# every punctuation, number, symbol, mark and space code point, and every 61st of the rest
_NUMERIC_EXTRA = frozenset(cp for a, b in NUMERIC_EXTRA_RANGES for cp in range(a, b + 1))
PROBES = [cp for cp in ALL if unicodedata.category(chr(cp))[0] in "PNSMZ" or cp % 61 == 0 or cp in _NUMERIC_EXTRA]
CONFIGS = {
    "Whitespace": ([{"type": "Whitespace"}], P.Whitespace()),
    "BertPreTokenizer": ([{"type": "BertPreTokenizer"}], P.BertPreTokenizer()),
    "Punctuation": ([{"type": "Punctuation", "behavior": "Isolated"}], P.Punctuation()),
    "Digits": ([{"type": "Digits", "individual_digits": True}], P.Digits(individual_digits=True)),
}


def test_numeric_table_is_what_digits_isolates():
    digits = P.Digits(individual_digits=True)
    isolated = {cp for cp in ALL if len(digits.pre_tokenize_str(f"a{chr(cp)}b")) == 3}
    assert isolated == {cp for cp in ALL if _is_numeric(chr(cp))}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_pre_tokenizers_split_as_tokenizers_does(name):
    parts, reference = CONFIGS[name]
    differ = []
    for cp in PROBES:
        text = f"a{chr(cp)}b 1{chr(cp)}"
        ours = [(w.text, w.span(0, len(w.text))) for w in pre_tokenize([Piece.of(text)], parts)]
        if ours != reference.pre_tokenize_str(text):
            differ.append(cp)
    assert not differ, (name, len(differ), [hex(cp) for cp in differ[:8]])
