"""Docstring examples (``pytest labkit --doctest-modules``, part of ``make test``): loads shared.

Each example loads what it needs (``tok = labkit.load("qwen2")``) so that a reader can copy
it alone; run together, ~250 examples would parse the same bundled files again and again, so
while a doctest runs, ``labkit.load`` answers a repeated call from a per-session memo.
Tests under ``tests/`` are not affected (they have their own fixtures in tests/conftest.py).
"""
from __future__ import annotations

import pytest
from _pytest.doctest import DoctestItem

import labkit
import labkit.factory

_LOADED: dict = {}


def _memo_load(source, *, engine=None, pre=None):
    if not isinstance(source, str):
        return labkit.factory.load(source, engine=engine, pre=pre)
    key = (source, engine, pre)
    if key not in _LOADED:
        _LOADED[key] = labkit.factory.load(source, engine=engine, pre=pre)
    return _LOADED[key]


@pytest.fixture(autouse=True)
def _shared_loads_in_doctests(request, monkeypatch):
    if isinstance(request.node, DoctestItem):
        monkeypatch.setattr(labkit, "load", _memo_load)
    yield
