"""Shared fixtures: tokenizers built once per test session, and the helper folder on the path.

The helpers live in ``tests/support/`` (modules that hold no tests); test modules import
them instead of importing each other.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from support import engines  # noqa: E402


@pytest.fixture(scope="session")
def tokenizer():
    """``tokenizer(name, engine)``: the session's tokenizer for that pair (built on first use)."""
    return engines.tokenizer


@pytest.fixture(scope="session")
def loaded():
    """``loaded(name, engine=None)``: ``labkit.load`` once per session for that pair."""
    return engines.loaded
