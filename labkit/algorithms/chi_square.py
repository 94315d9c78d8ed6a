"""Pearson's chi-square goodness-of-fit test: do observed draws fit known probabilities?

Used to check samplers (Unigram lattice sampling, BPE-dropout) against an exact
distribution: categories expected fewer than 5 times are pooled into one, the statistic is
``sum((observed - expected)² / expected)`` and the p-value is the upper tail of the
chi-square distribution (the regularised upper incomplete gamma function, by its series or
continued fraction). Introduced in notebook ``13_where_vocabularies_come_from``.

Example:
    >>> from labkit.algorithms.chi_square import chi_square
    >>> chi_square({"a": 510, "b": 490}, {"a": 0.5, "b": 0.5}).p_value
    0.5270892568655383
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Mapping

from labkit.core import LabkitError


@dataclass(frozen=True)
class ChiSquare:
    """The test's result: statistic, degrees of freedom, p-value, draws and pooled bins.

    Example:
        >>> from labkit.algorithms.chi_square import ChiSquare
        >>> ChiSquare(0.4, 1, 0.53, 1000, 2)
        ChiSquare(statistic=0.4, dof=1, p_value=0.53, draws=1000, bins=2)
    """

    statistic: float
    dof: int
    p_value: float
    draws: int
    bins: int


def chi_square(observed: Mapping[Hashable, int], probabilities: Mapping[Hashable, float], min_expected: float = 5.0) -> ChiSquare:
    """Test observed counts against probabilities (which should sum to 1). An observed
    category with probability 0 fails the test outright (p = 0).

    Example:
        >>> from labkit.algorithms.chi_square import chi_square
        >>> chi_square({"x": 30, "y": 70}, {"x": 0.3, "y": 0.7}).p_value
        1.0
    """
    draws = sum(observed.values())
    if draws <= 0:
        raise LabkitError("chi_square: no draws")
    total_p = math.fsum(probabilities.values())
    if not abs(total_p - 1.0) < 1e-6:
        raise LabkitError(f"chi_square: probabilities sum to {total_p}, not 1")
    if any(count and probabilities.get(key, 0.0) <= 0.0 for key, count in observed.items()):
        return ChiSquare(math.inf, 0, 0.0, draws, 0)
    bins: list[tuple[float, int]] = []
    pooled_expected, pooled_observed = 0.0, 0
    for key, p in sorted(probabilities.items(), key=lambda item: -item[1]):
        expected = p * draws
        if expected >= min_expected:
            bins.append((expected, observed.get(key, 0)))
        else:
            pooled_expected += expected
            pooled_observed += observed.get(key, 0)
    if pooled_expected >= min_expected or (pooled_expected > 0 and not bins):
        bins.append((pooled_expected, pooled_observed))
    elif pooled_expected > 0:  # a pool still too small for the approximation joins the smallest bin
        expected, observed_count = bins[-1]
        bins[-1] = (expected + pooled_expected, observed_count + pooled_observed)
    if len(bins) < 2:
        return ChiSquare(0.0, 0, 1.0, draws, len(bins))
    statistic = math.fsum((o - e) ** 2 / e for e, o in bins)
    dof = len(bins) - 1
    return ChiSquare(statistic, dof, upper_gamma_regularized(dof / 2.0, statistic / 2.0), draws, len(bins))


def upper_gamma_regularized(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): the chi-square upper tail is Q(dof/2, statistic/2).

    Example:
        >>> from labkit.algorithms.chi_square import upper_gamma_regularized
        >>> round(upper_gamma_regularized(1.0, 1.0), 6)
        0.367879
    """
    if x <= 0:
        return 1.0
    log_prefix = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        # series for the lower part P(a, x)
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    # Lentz's continued fraction for Q(a, x)
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return min(1.0, math.exp(log_prefix) * h)
