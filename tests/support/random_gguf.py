"""The random GGUF families' stored llama.cpp answers, and every engine's outcome on them,
worked out once per test session (one family's files are written to a folder that goes away)."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from labkit.conformance import random_gguf as rg


@functools.lru_cache(maxsize=None)
def reference(family: str) -> dict[int, dict]:
    """llama.cpp's stored answers for ``family`` ("byte", "spm", "wpm", "ugm"), by seed."""
    return rg.load_reference(family=family)


@functools.lru_cache(maxsize=None)
def outcomes(family: str, seeds: tuple[int, ...] | None = None) -> dict[int, dict[str, str]]:
    """Per seed, per engine of ``rg.ENGINES``: "exact", "refused: why" or "differs: where"."""
    answers = reference(family)
    with tempfile.TemporaryDirectory(prefix=f"random_gguf_{family}_") as folder:
        return {seed: rg.check_seed(seed, answers[seed], Path(folder), family=family)
                for seed in (seeds if seeds is not None else rg.family_module(family).SEEDS)}
