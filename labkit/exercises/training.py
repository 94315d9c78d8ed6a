"""Checkers for the "Try it" exercises of notebook 13 (where vocabularies come from).

Each checker works the right answer out with labkit (the trainer's forward-backward, the
sampler's lattice), prints ``right`` or ``wrong`` with a hint and returns True/False; an
answer still left as ``None`` or ``...`` prints ``not answered yet`` and returns None.
Introduced in notebook ``13_where_vocabularies_come_from``.

Example:
    >>> from labkit.exercises.training import check_em_step
    >>> check_em_step({"ab": 1}, {"a": 0.25, "b": 0.25, "ab": 0.5}, {"a": 0.1, "b": 0.1, "ab": 0.8})
    right
    True
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Mapping, Sequence

from labkit.training.unigram_train import edge_marginals
from labkit.core import LabkitError
from labkit.exercises import unanswered as _unanswered
from labkit.exercises import verdict as _verdict


def em_step(corpus: Mapping[str, int], probabilities: Mapping[str, float]) -> dict[str, float]:
    """One plain EM step of a Unigram model: expected piece counts by forward-backward over
    each word (times its count), then each count divided by their total.

    Example:
        >>> from labkit.exercises.training import em_step
        >>> em_step({"ab": 1}, {"a": 0.25, "b": 0.25, "ab": 0.5})
        {'a': 0.09999999999999999, 'b': 0.09999999999999999, 'ab': 0.7999999999999999}
    """
    pieces = list(probabilities)
    if any(p <= 0 for p in probabilities.values()):
        raise LabkitError("em_step: every probability must be positive")
    expected = dict.fromkeys(pieces, 0.0)
    for word, count in corpus.items():
        edges = []
        for i in range(len(word)):
            for j in range(i + 1, len(word) + 1):
                piece = word[i:j]
                if piece in probabilities:
                    edges.append((i, j, piece, math.log(probabilities[piece]), probabilities[piece]))
        edges.sort(key=lambda edge: (edge[1], edge[0]))
        covered = {edge[0] for edge in edges}
        if len(covered) < len(word):
            raise LabkitError(f"em_step: the pieces cannot spell {word!r}")
        _, marginals = edge_marginals(len(word), edges)
        for edge, value in zip(edges, marginals):
            expected[edge[2]] += count * value
    total = math.fsum(expected.values())
    return {piece: expected[piece] / total for piece in pieces}


def check_em_step(corpus: Mapping[str, int], probabilities: Mapping[str, float], answer) -> bool | None:
    """The piece probabilities after one EM step (E: expected counts, M: normalise), to 3 decimals.

    Example:
        >>> from labkit.exercises.training import check_em_step
        >>> check_em_step({"ab": 1}, {"a": 0.25, "b": 0.25, "ab": 0.5}, {"a": 0.1, "b": 0.1, "ab": 0.8})
        right
        True
    """
    if _unanswered(answer):
        return None
    right = em_step(corpus, probabilities)
    ok = set(answer) == set(right) and all(abs(float(answer[p]) - right[p]) < 1e-3 for p in right)
    return _verdict(ok, "for each word list its segmentations, weight each by the product of its piece "
                        "probabilities, share the word's count among them; add up per piece; divide by the total")


@lru_cache(maxsize=1)
def _sampler():
    from labkit.training.unigram_sampling import UnigramSampler

    return UnigramSampler.load("botchan-unigram")


def check_most_likely_sample(text: str, answer: Sequence[str]) -> bool | None:
    """The pieces a sample of ``text`` gives as alpha -> infinity (botchan-unigram).

    Example:
        >>> from labkit.exercises.training import check_most_likely_sample
        >>> check_most_likely_sample("Hello", ["▁He", "ll", "o"])
        right
        True
    """
    if _unanswered(answer):
        return None
    sampler = _sampler()
    best = [sampler.model.pieces[i] for i in sampler.nbest(text, 1)[0][0]]
    return _verdict(list(answer) == best, "as alpha grows, exp(alpha * score) puts all the mass on the best-scored path")


def segmentation_count(text: str) -> int:
    """How many segmentations of ``text`` the botchan-unigram lattice holds.

    Example:
        >>> from labkit.exercises.training import segmentation_count
        >>> segmentation_count("I am")
        6
    """
    return len(_sampler().lattice(text).paths())


def check_spread_at_zero(text: str, answer) -> bool | None:
    """The probability of each segmentation of ``text`` at alpha -> 0 (botchan-unigram),
    as a float or a fraction string such as ``"1/12"``.

    Example:
        >>> from labkit.exercises.training import check_spread_at_zero, segmentation_count
        >>> check_spread_at_zero("I am", 1 / segmentation_count("I am"))
        right
        True
    """
    if _unanswered(answer):
        return None
    if isinstance(answer, str) and "/" in answer:
        top, bottom = answer.split("/", 1)
        answer = float(top) / float(bottom)
    expected = 1.0 / segmentation_count(text)
    return _verdict(abs(float(answer) - expected) < 1e-9,
                    "at alpha = 0 every segmentation weighs exp(0) = 1: count the paths through the lattice")
