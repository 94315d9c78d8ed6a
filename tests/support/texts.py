"""Hypothesis text for the byte-level BPE tests: emoji, CJK, combining marks, control
characters, long digit runs, whitespace runs, contractions, special-token spellings."""
from hypothesis import strategies as st

PIECES = [
    "😀", "👨\u200d👩\u200d👧", "🇯🇵", "日本語", "中文字", "한국어", "ひらがな", "Ελληνικά", "русский",
    "e\u0301", "a\u0308\u0323", "\u0301", "\u0915\u094d\u0937", "\u0e01\u0e34",
    "\x00", "\x07", "\x1f", "\x7f", "\x85", "\u00a0", "\u00ad", "\u200b", "\u2028", "\u3000", "\ufeff",
    "\t", "\r\n", "\n\n\n", "   ", "        ", " \n ", "\r",
    "0123456789", "12345678901234567890", "٠١٢٣", "²³", "3.14", "1,000,000",
    "'s", "'ſ", "'LL", "'Re", "don't", "I'M", "Hello", " world", "CamelCaseWord", "HTTPServer",
    "<|endoftext|>", "<|im_start|>", "$", "...", "—", "ß", "İ", "ǅ", "ﬁ", "Å", "Ω",
]

texts = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(max_size=6), st.sampled_from(" \n\t")),
    max_size=16,
).map("".join)

