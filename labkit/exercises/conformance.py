"""Checkers for the "Try it" exercises of notebook 14 (the conformance matrix).

Each checker prints ``right`` or ``wrong`` with a hint and returns True/False.
Introduced in notebook ``14_conformance_matrix``.

Example (a WordLevel tokenizer.json with a Whitespace pre-tokenizer: labkit serves it):
    >>> from labkit.conformance.hf_json_configs import hf_cases
    >>> from labkit.exercises.conformance import check_default_engine
    >>> check_default_engine(next(c for c in hf_cases() if c.name == "hf/wordlevel-whitespace"), "labkit")
    right
    True
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from labkit.core import LabkitError
from labkit.exercises import verdict as _verdict


def _load(case, engine):
    from labkit.factory import load

    folder = Path(tempfile.mkdtemp(prefix="labkit-try-"))
    return load(case.build(folder), engine=engine)


def check_default_engine(case, answer: str) -> bool:
    """Which engine does ``labkit.load`` pick for this configuration with engine=None?

    Introduced in notebook ``14_conformance_matrix``.

    Example (labkit has no UnicodeScripts pre-tokenizer, so tokenizers serves it):
        >>> from labkit.conformance.hf_json_configs import hf_cases
        >>> check_default_engine(next(c for c in hf_cases() if c.name == "hf/wordlevel-unicode-scripts"), "hf")
        right
        True
    """
    picked = _load(case, None).engine
    return _verdict(answer == picked, "labkit serves a tokenizer.json when it implements every component; else hf")


def check_refused_component(case, answer: str) -> bool:
    """Which component (e.g. ``"pre_tokenizer UnicodeScripts"``) makes engine='labkit' refuse?
    ``"none"`` if labkit serves the configuration.

    Introduced in notebook ``14_conformance_matrix``.

    Example:
        >>> from labkit.conformance.hf_json_configs import hf_cases
        >>> case = next(c for c in hf_cases() if c.name == "hf/wordlevel-unicode-scripts")
        >>> check_refused_component(case, "pre_tokenizer UnicodeScripts")
        right
        True
    """
    try:
        _load(case, "labkit")
    except LabkitError as exc:
        return _verdict(answer != "none" and answer in str(exc), "read the refusal: it names the component")
    return _verdict(answer == "none", "labkit served this configuration: nothing was refused")
