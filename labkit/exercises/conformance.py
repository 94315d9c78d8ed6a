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
from labkit.exercises import answerable, verdict as _verdict


def _load(case, engine):
    from labkit.factory import load

    folder = Path(tempfile.mkdtemp(prefix="labkit-try-"))
    return load(case.build(folder), engine=engine)


@answerable
def check_default_engine(case, answer: str) -> bool:
    """Which engine does ``labkit.load`` pick for this configuration with engine=None?

    Introduced in notebook ``14_conformance_matrix``.

    Example (labkit refuses a Split regex Oniguruma reads otherwise, so tokenizers serves it):
        >>> from labkit.conformance.hf_json_configs import hf_cases
        >>> check_default_engine(next(c for c in hf_cases() if c.name == "hf/wordlevel-split-oniguruma-hex"), "hf")
        right
        True
    """
    picked = _load(case, None).engine
    hint = ("labkit serves a tokenizer.json when it implements every component; else hf"
            if answer == "labkit" else "hf serves it only when labkit cannot: does labkit implement every component?")
    return _verdict(answer == picked, hint)


@answerable
def check_refused_component(case, answer: str) -> bool:
    """Which component (e.g. ``"pre_tokenizer Split"``) makes engine='labkit' refuse?
    ``"none"`` if labkit serves the configuration.

    Introduced in notebook ``14_conformance_matrix``.

    Example:
        >>> from labkit.conformance.hf_json_configs import hf_cases
        >>> case = next(c for c in hf_cases() if c.name == "hf/wordlevel-split-oniguruma-hex")
        >>> check_refused_component(case, "pre_tokenizer Split")
        right
        True
    """
    answer = str(answer).strip()
    try:
        _load(case, "labkit")
    except LabkitError as exc:
        refusal = str(exc)
    else:
        return _verdict(answer == "none", "labkit served this configuration: nothing was refused, answer 'none'")
    if answer == "none":
        return _verdict(False, "labkit refused this one: load it with engine='labkit' and read the error")
    kind, _, name = answer.partition(" ")
    if not name or f"implement {kind} " not in refusal:
        return _verdict(False, "the kind: answer as '<kind> <Type>', the kind being normalizer, pre_tokenizer, "
                               "model, decoder or post_processor")
    return _verdict(f"implement {kind} {name}" in refusal, f"the kind ({kind}) is right, the type is not")
