"""labkit's tokenizer.json normalisers (algorithms/hf_normalize.py) against tokenizers' own, code
point by code point: the Unicode tables differ (Python 3.11 carries Unicode 14; tokenizers'
normalisation tables are older and its lowercasing newer), so labkit keeps tables measured from
tokenizers. Before them, BertNormalizer's cleaning dropped 830,233 unassigned code points
tokenizers keeps, StripAccents dropped 315 marks it keeps, NFKD decomposed 73 characters it
leaves alone and Lowercase missed 55 letters."""
from __future__ import annotations

import unicodedata

import pytest
from tokenizers import normalizers as N

from labkit.algorithms.hf_normalize import REFERENCE_UNDECOMPOSED, Piece, _is_mark, normalize
from labkit.algorithms.bert_basic import LOWERCASE_EXTRA
from labkit.algorithms.pretokenize import REFERENCE_STARTERS

ALL = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def test_undecomposed_table_is_exactly_where_tokenizers_nfkd_keeps_a_character():
    nfkd = N.NFKD()
    measured = {cp for cp in ALL if unicodedata.decomposition(chr(cp)) and nfkd.normalize_str(chr(cp)) == chr(cp)}
    assert measured == REFERENCE_UNDECOMPOSED and len(measured) == 73


def test_mark_table_is_exactly_what_strip_accents_drops():
    strip = N.StripAccents()
    dropped = {cp for cp in ALL if strip.normalize_str("a" + chr(cp)) == "a"}
    ours = {cp for cp in ALL if _is_mark(chr(cp))}
    assert ours == dropped and len(dropped) == 2097


# every mark, control, format, private-use and decomposable code point, each one a table lists,
# and every 97th of the rest (unassigned ones included: BertNormalizer's cleaning dropped them)
PROBES = sorted({cp for cp in ALL if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me", "Cc", "Cf", "Co")
                 or unicodedata.decomposition(chr(cp))}
                | REFERENCE_UNDECOMPOSED | REFERENCE_STARTERS | set(LOWERCASE_EXTRA) | set(ALL[::97]))
CONFIGS = {
    "BertNormalizer": ([{"type": "BertNormalizer"}], N.BertNormalizer()),
    "BertNormalizer strip_accents, no lowercase": ([{"type": "BertNormalizer", "strip_accents": True, "lowercase": False}],
                                                   N.BertNormalizer(strip_accents=True, lowercase=False)),
    "BertNormalizer no cleaning": ([{"type": "BertNormalizer", "clean_text": False}], N.BertNormalizer(clean_text=False)),
    "Lowercase": ([{"type": "Lowercase"}], N.Lowercase()),
    "NFD + StripAccents": ([{"type": "NFD"}, {"type": "StripAccents"}], N.Sequence([N.NFD(), N.StripAccents()])),
    "NFKC + Lowercase": ([{"type": "NFKC"}, {"type": "Lowercase"}], N.Sequence([N.NFKC(), N.Lowercase()])),
    "NFKD": ([{"type": "NFKD"}], N.NFKD()),
    "NFC": ([{"type": "NFC"}], N.NFC()),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_normalisers_equal_tokenizers_on_every_probe(name):
    parts, reference = CONFIGS[name]
    assert len(PROBES) > 15_000
    differ = [cp for cp in PROBES
              if normalize(Piece.of(f"a{chr(cp)}\u0301b"), parts).text != reference.normalize_str(f"a{chr(cp)}\u0301b")]
    assert not differ, (name, len(differ), [hex(cp) for cp in differ[:8]])
