"""Training corpora and long inputs for the random SentencePiece seeds
(:mod:`labkit.conformance.random_spm`).

A seed trains either on botchan or on a corpus generated here from a seeded lexicon of one
kind of text (:data:`CORPUS_KINDS`): CJK-heavy, Latin with diacritics, digits-heavy,
code-like, repetitive, text with many spaces, or a mix. Words are drawn Zipf-like so that
training finds real merges. The long inputs (:func:`long_texts`) are what short strings never
reach: whole texts of thousands of characters (Unigram's whole-text lattice, and the
rebase of sentencepiece's running total past 1e5), runs of
hundreds to thousands of characters without whitespace (score BPE's long-word path), and
text mostly outside the trained alphabet (byte fallback or ``<unk>``).

This module's name starts with none of the provider prefixes on purpose: it holds no cases.

Example:
    >>> lines = corpus_lines("cjk", 3)
    >>> len(lines), lines == corpus_lines("cjk", 3)
    (1500, True)
"""
from __future__ import annotations

import random
from functools import lru_cache

from labkit.paths import data_path

CORPUS_KINDS = ("botchan", "cjk", "latin", "digits", "code", "repetitive", "spaces", "mixed")
CORPUS_LINES = 1500  # as many lines as the trainer reads (input_sentence_size in spm_matrix._BASE)

# kind -> (alphabet, word lengths, separators between words)
_KINDS = {
    "cjk": ("".join(chr(c) for c in range(0x4E00, 0x4E00 + 260)) + "のはをにがでとも日本語東京、。「」",
            (1, 4), ("", "", "", " ", "、", "。")),
    "latin": ("abcdefghijklmnopqrstuvwxyzéèêëàâäïîôöùûüçñßøåæœÉÀÇ", (1, 9), (" ", " ", ", ", ". ")),
    "digits": ("0123456789", (1, 8), (" ", "-", ".", ",", ":", "/", " x ")),
    "code": ("abcdefghijklmnopqrstuvwxyz_ABCDEFGXYZ0123", (1, 10),
             (" ", "(", ")", ".", "_", " = ", "; ", "{", "}", "[", "]", ", ", "->", "  ", "\t")),
    "repetitive": ("abcab", (1, 6), ("", " ", "")),
    "spaces": ("abcdefghijklmnopqrstuvwxyz", (1, 7), (" ", "  ", "   ", "\t", " \t ", "      ")),
}


def _lexicon(rng: random.Random, alphabet: str, lengths: tuple[int, int], size: int = 300) -> list[str]:
    shortest, longest = lengths
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(shortest, longest))) for _ in range(size)]


def _zipf_word(rng: random.Random, lexicon: list[str]) -> str:
    # rank r drawn with weight about 1/r: a few words very frequent, most rare
    return lexicon[min(len(lexicon) - 1, int(rng.paretovariate(1.0)) - 1)]


def _generated_line(rng: random.Random, kind: str, lexicon: list[str]) -> str:
    _, _, separators = _KINDS[kind]
    words = [_zipf_word(rng, lexicon) for _ in range(rng.randint(1, 14))]
    line = words[0]
    for word in words[1:]:
        line += rng.choice(separators) + word
    if kind == "spaces" and rng.random() < 0.3:  # leading and trailing runs of spaces too
        line = " " * rng.randint(1, 6) + line + " " * rng.randint(0, 6)
    return line


@lru_cache(maxsize=64)
def corpus_lines(kind: str, seed: int) -> tuple[str, ...]:
    """The ``CORPUS_LINES`` lines of corpus ``kind`` for ``seed`` (botchan's own lines for ``botchan``).

    Example:
        >>> corpus_lines("botchan", 0)[1][:4]
        'This'
        >>> any("  " in line for line in corpus_lines("spaces", 1))
        True
    """
    if kind == "botchan":
        text = data_path("corpus/botchan.txt").read_text(encoding="utf-8")
        return tuple(line for line in text.splitlines() if line.strip())
    rng = random.Random(seed * 7 + 3)
    if kind == "mixed":
        return tuple(rng.choice(corpus_lines(rng.choice(list(_KINDS)), seed)) for _ in range(CORPUS_LINES))
    lexicon = _lexicon(rng, *_KINDS[kind][:2])
    return tuple(_generated_line(rng, kind, lexicon) for _ in range(CORPUS_LINES))


def corpus_alphabet(kind: str, seed: int) -> str:
    """Every character the corpus holds, in first-seen order.

    Example:
        >>> set(corpus_alphabet("digits", 0)) <= set("0123456789 -.,:/x")
        True
    """
    return "".join(dict.fromkeys("".join(corpus_lines(kind, seed))))


# characters no corpus above holds: scripts, rare CJK, emoji, symbols (byte fallback or <unk>)
FOREIGN_CHARACTERS = (
    "абвгдежзийклмнопрстуфхцчшщыэюя" "αβγδεζηθικλμνξπρστυφχψω" "ሀሁሂሃሄህሆ" "한국어텍스트" "ภาษาไทย"
    "नमस्तेदुनिया" "مرحبابالعالم" "㐀㐁㐂㐃䶵" "🙂🎉👍🏽🚀" "∑∫√∞≈≠" "ꙮ𝔘𝔫𝔦" "\U00020000\U0002a6d6"
)


def _joined_lines(rng: random.Random, lines: tuple[str, ...], joiner: str, target: int) -> str:
    """Consecutive corpus lines from a random one on, joined, until ``target`` characters."""
    parts, size, start = [], 0, rng.randrange(len(lines))
    while size < target:
        line = lines[start % len(lines)]
        parts.append(line)
        size += len(line) + len(joiner)
        start += 1
    return joiner.join(parts)


def long_texts(seed: int, kind: str, longest: tuple[int, int] = (20000, 40000)) -> tuple[str, ...]:
    """Seed ``seed``'s long inputs for a model trained on corpus ``kind``: whole texts (2,000
    to 6,000 characters of the corpus joined by newlines and by spaces, and one of ``longest``
    characters: a Unigram model's running Viterbi total passes the 1e5 at which sentencepiece
    rebases it after about 50,000), runs without whitespace (corpus letters, digits, one word
    repeated; 200 to 3,000 characters), and byte-fallback heavy text (mostly characters outside
    the corpus).

    Example:
        >>> texts = long_texts(0, "latin")
        >>> len(texts), max(map(len, texts)) >= 20000
        (8, True)
    """
    rng = random.Random(seed * 104723 + 29)
    lines = corpus_lines(kind, seed)
    alphabet = [c for c in corpus_alphabet(kind, seed) if not c.isspace()]
    out = [_joined_lines(rng, lines, joiner, rng.randint(2000, 6000)) for joiner in ("\n", " ")]
    out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(200, 3000))))
    out.append("".join(rng.choice("0123456789") for _ in range(rng.randint(200, 2000))))
    word = "".join(rng.choice(lines).split()[:1]) or "the"
    out.append(word * max(1, rng.randint(200, 3000) // len(word)))
    foreign = "".join(rng.choice(FOREIGN_CHARACTERS) if rng.random() < 0.8 else rng.choice(alphabet)
                      for _ in range(rng.randint(50, 500)))
    out.append(foreign)
    out.append(" ".join(foreign[i:i + rng.randint(1, 9)] for i in range(0, len(foreign), 9)))
    out.append(_joined_lines(rng, lines, rng.choice(("\n", " ", "")), rng.randint(*longest)))
    return tuple(out)
