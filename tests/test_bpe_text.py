"""The hypothesis text shared by the byte-level BPE tests covers the hard Unicode categories."""
import unicodedata

from support.texts import PIECES


def test_pieces_cover_the_hard_categories():
    categories = {unicodedata.category(ch) for piece in PIECES for ch in piece}
    # marks, controls, spaces, digits, letters of several scripts, format chars, symbols
    for needed in ("Mn", "Cc", "Zs", "Nd", "No", "Lo", "Lu", "Ll", "Lt", "Cf", "So", "Zl"):
        assert needed in categories, needed
