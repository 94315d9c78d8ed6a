"""Shared fixtures: tokenizers built once per test session, and the helper folder on the path.

The helpers live in ``tests/support/`` (modules that hold no tests); test modules import
them instead of importing each other.
"""
from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# a busy CI machine is no bug: no per-example deadline and no "generation too slow" failure
# (each test's own settings still choose its example counts)
settings.register_profile("labkit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("labkit")

from support import engines  # noqa: E402


@pytest.fixture(scope="session")
def tokenizer():
    """``tokenizer(name, engine)``: the session's tokenizer for that pair (built on first use)."""
    return engines.tokenizer


@pytest.fixture(scope="session")
def loaded():
    """``loaded(name, engine=None)``: ``labkit.load`` once per session for that pair."""
    return engines.loaded


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Collect the garbage of the tests before, then freeze the survivors out of the collector.

    A worker holds every tokenizer, trained model and hypothesis cache of the session: a full
    ``gc.collect()`` (which each benchmark timing round calls) scanned it all, seconds per call
    late in a run. Frozen objects are still freed when their last reference goes; only a cycle
    among them that dies later is never collected (the session's caches live to its end anyway).
    """
    gc.collect()
    gc.freeze()
