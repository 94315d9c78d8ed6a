"""Checkers for the "Try it" exercises of notebook 14 (the conformance matrix).

Each checker prints ``right`` or ``wrong`` with a hint and returns True/False.
Introduced in notebook ``14_conformance_matrix``.

Example: ``check_default_engine(case, "labkit")`` prints ``right`` when labkit serves it
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

    Example: ``check_default_engine(case, "hf")`` -> True for a Precompiled normaliser
    Introduced in notebook ``14_conformance_matrix``.
    """
    picked = _load(case, None).engine
    return _verdict(answer == picked, "labkit serves a tokenizer.json when it implements every component; else hf")


def check_refused_component(case, answer: str) -> bool:
    """Which component (e.g. ``"pre_tokenizer UnicodeScripts"``) makes engine='labkit' refuse?
    ``"none"`` if labkit serves the configuration.

    Example: ``check_refused_component(case, "normalizer Precompiled")`` -> True
    Introduced in notebook ``14_conformance_matrix``.
    """
    try:
        _load(case, "labkit")
    except LabkitError as exc:
        return _verdict(answer != "none" and answer in str(exc), "read the refusal: it names the component")
    return _verdict(answer == "none", "labkit served this configuration: nothing was refused")
