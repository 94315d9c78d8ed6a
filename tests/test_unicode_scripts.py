"""labkit's UnicodeScripts (labkit/algorithms/unicode_scripts.py) against tokenizers' own, on
every code point: the same code points have no script, and the same ones share a script.
Then whole pieces and offsets on random text of many scripts."""
from __future__ import annotations

import random

import pytest
import tokenizers
from tokenizers import pre_tokenizers as P

import labkit
from labkit.algorithms.unicode_scripts import ANY, script, script_pieces
from labkit.conformance.hf_json_configs import build_json, node

ALL = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
REFERENCE = P.UnicodeScripts()


def _pieces(text: str) -> list[str]:
    return [piece for piece, _ in REFERENCE.pre_tokenize_str(text)]


def test_the_code_points_without_a_script_are_tokenizers_ones():
    # a character with no script alone makes no piece at all; one with a script makes itself
    ours = {cp for cp in ALL if script(chr(cp)) == ANY}
    theirs = {cp for cp in ALL if not _pieces(chr(cp))}
    assert ours == theirs and 800_000 < len(theirs) < 1_100_000


def test_the_code_points_sharing_a_script_are_tokenizers_ones():
    """Two characters with scripts make one piece exactly when they share one: each code point
    is checked against the first of its script, and the first of every script against each
    other, which pins the whole partition."""
    first: dict[str, str] = {}
    for cp in ALL:
        name = script(chr(cp))
        if name == ANY:
            continue
        char = chr(cp)
        leader = first.setdefault(name, char)
        assert len(_pieces(leader + char)) == 1, (hex(cp), name)
    leaders = list(first.values())
    for i, a in enumerate(leaders):
        for b in leaders[i + 1:]:
            assert len(_pieces(a + b)) == 2, (a, b)
    assert len(first) == 135  # tokenizers' 137 with Hiragana and Katakana counted as Han


def test_pieces_equal_tokenizers_on_random_text():
    rng = random.Random(4)
    alphabet = "ab cd 12 .,!- \t\n日本語ひらがなカタカナーАБВгдαβγ한국어عربيעבריתไทย😀\u0301\u200d\U0001FAE8"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        expected = [(piece, span) for piece, span in REFERENCE.pre_tokenize_str(text)]
        assert [(text[s:e], (s, e)) for s, e in script_pieces(text)] == expected, repr(text)


@pytest.mark.parametrize("base", ["wordlevel", "plain", "unigram"])
def test_a_tokenizer_json_with_unicode_scripts_is_served_exactly(tmp_path, base):
    path = tmp_path / "tokenizer.json"
    pre = {"type": "Sequence", "pretokenizers": [node("WhitespaceSplit"), node("UnicodeScripts")]}
    path.write_text(build_json(base, normalizer=node("NFKC"), pre_tokenizer=pre))
    ours, reference = labkit.load(path, engine="labkit"), tokenizers.Tokenizer.from_file(str(path))
    assert ours.engine == "labkit"
    for text in ("Hello世界123 naïve", "  ｶﾀｶﾅ and ひらがな!", "", "ab\u0301c дом"):
        got, want = ours.encode(text), reference.encode(text, add_special_tokens=False)
        assert (got.ids, got.offsets) == (want.ids, [tuple(o) for o in want.offsets]), repr(text)
