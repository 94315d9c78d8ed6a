"""labkit pre-tokenizes with the ``regex`` module, the references with their own Unicode tables:
the two must agree on which characters are letters and numbers. Characters that newer ``regex``
releases (2025.10.23 on) take as ``\\p{L}`` are not letters to tiktoken or tokenizers, so such a
release split text differently (hypothesis found U+3D000 followed by "'s"); pyproject.toml
keeps ``regex`` below it, and this test pins the agreement on such characters."""
from __future__ import annotations

import pytest

from support.engines import loaded

# letters of Unicode 16/17 that regex 2025.10.23+ knows and the references do not (first, middle, last)
NEWER_LETTERS = [0x88F, 0x32862, 0x32B68, 0x33479, 0x558, 0x3DBB2, 0x3E3D6, 0x3FC3F, 0x3D000]
TEXTS = [f"{chr(cp)}'s {chr(cp)}x 1{chr(cp)}2 {chr(cp)}{chr(cp)}" for cp in NEWER_LETTERS]


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "qwen2"])
def test_newer_letters_split_as_the_references_split_them(name):
    ours, tiktoken_engine, hf_engine = (loaded(name, e) for e in ("labkit", "tiktoken", "hf"))
    for text in TEXTS:
        want = tiktoken_engine.encode(text, parse_special=False).ids
        assert hf_engine.encode(text, parse_special=False).ids == want, text
        assert ours.encode(text, parse_special=False).ids == want, (name, text)


def test_regex_module_tables_are_the_ones_measured():
    import regex

    assert not any(regex.match(r"\p{L}", chr(cp)) for cp in NEWER_LETTERS), regex.__version__
