"""Checkers for the "Try it" exercises of notebooks 05 (Unigram) and 06 (the charsmap).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint, and returns True/False.
Introduced in notebooks ``05_unigram_trie_viterbi`` and ``06_normalization_charsmap``.

Example: ``check_viterbi({"a": -1, "b": -2, "ab": -2.5}, "ab", ["ab"])`` prints ``right``
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

from labkit.algorithms.unigram import UnigramModel
from labkit.core import LabkitError
from labkit.exercises import verdict as _verdict


@lru_cache(maxsize=1)
def _botchan():
    import labkit

    return labkit.load("botchan-unigram", engine="labkit")


def _toy(scores: Mapping[str, float]) -> UnigramModel:
    if not scores or not all(isinstance(p, str) and p for p in scores):
        raise LabkitError("the scores must map non-empty piece strings to numbers")
    return UnigramModel(["<unk>", *scores], [0.0, *scores.values()], [2] + [1] * len(scores), sentencepiece=False)


def check_viterbi(scores: Mapping[str, float], text: str, answer: Sequence[str]) -> bool:
    """Which pieces does the Viterbi pass choose for ``text`` (already normalised) given
    piece ``scores``? Unknown characters score ``min score - 10``.

    Example: ``check_viterbi({"a": -1, "b": -2, "ab": -2.5}, "ab", ["ab"])`` -> True
    """
    model = _toy(scores)
    best = [text[s:e] for _, s, e in model.encode(text)]
    return _verdict(list(answer) == best,
                    "add up the scores of each way to cut the text into pieces and keep the highest total")


def check_best_score(scores: Mapping[str, float], text: str, answer: float) -> bool:
    """What total score does the best segmentation of ``text`` reach?

    Example: ``check_best_score({"a": -1, "b": -2, "ab": -2.5}, "ab", -2.5)`` -> True
    """
    lattice = _toy(scores).lattice(text)
    return _verdict(abs(float(answer) - lattice.score) < 1e-6,
                    "best[j] = max over pieces text[i:j] of best[i] + score; the answer is best[len(text)]")


def check_botchan_tokens(text: str, answer: Sequence[str]) -> bool:
    """Which tokens does the botchan Unigram model give ``text``?

    Example: ``check_botchan_tokens("What is", ["▁What", "▁is"])`` -> True
    """
    return _verdict(list(answer) == _botchan().encode(text, parse_special=False).tokens,
                    "normalise first (NFKC, '▁' for spaces and in front), then find the best-scoring cut")


def check_normalized(text: str, answer: str) -> bool:
    """What does the botchan model's normaliser (NFKC charsmap + whitespace rules) make of
    ``text``?

    Example: ``check_normalized("Ｈｉ  there", "▁Hi▁there")`` -> True
    """
    return _verdict(answer == _botchan().normalize(text),
                    "apply the longest charsmap rule at each position, squeeze spaces, add '▁' in front, spaces -> '▁'")


def check_charsmap_replacement(char: str, answer: str) -> bool:
    """What does the NFKC charsmap replace ``char`` with (itself if no rule applies)?

    Example: ``check_charsmap_replacement("①", "1")`` -> True
    """
    if not isinstance(char, str) or not char:
        raise LabkitError("check_charsmap_replacement: give a non-empty str")
    match = _botchan().normalizer.charsmap.longest_match(char.encode("utf-8"))
    expected = match.replacement if match is not None and match.length == len(char.encode("utf-8")) else char
    return _verdict(answer == expected, "walk the double array byte by byte; the longest key that ends a leaf wins")
