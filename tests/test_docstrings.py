"""Docstring examples are doctests: an ``Example:`` is followed by ``>>>`` lines that run.

``make test`` runs them (``pytest labkit --doctest-modules``); this test keeps the old
unexecuted form (``Example: ``code`` -> value``, on a line of its own or at the end of a
sentence) from coming back.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "labkit"
# Docstrings still in the old one-line form, per file: none since issue 13's conversion
# finished; a new or edited docstring writes >>> lines.
PENDING: dict[str, int] = {}

# "Example:" starting a line or inside one ("Forget the cache. Example: ``c.clear()``")
EXAMPLE = re.compile(r"(?:^|\s)Example::?(?:[ \t]+\S|[ \t]*$)", re.M)


def docstrings(source: str, where: str):
    """(place, docstring) for the module and every class and function in ``source``."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield f"{where}:{getattr(node, 'lineno', 1)} {getattr(node, 'name', '<module>')}", doc


def unexecuted_examples(source: str, where: str) -> list[str]:
    """Places whose docstring has an ``Example:`` with no ``>>>`` line after it."""
    found = []
    for place, doc in docstrings(source, where):
        for match in EXAMPLE.finditer(doc):
            if ">>>" not in doc[match.end():]:
                found.append(place)
                break
    return found


def test_every_example_is_a_doctest():
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE.parent))
        found = unexecuted_examples(path.read_text(encoding="utf-8"), where)
        if len(found) > PENDING.get(where, 0):
            missing += found
    assert not missing, f"docstring examples that are not doctests (write them as >>> lines): {missing[:20]}"


@pytest.mark.parametrize(
    "docstring, bad",
    [
        ('def f():\n    """Add.\n\n    Example: ``f()`` -> ``1``\n    """\n', True),
        ('def f():\n    """Add.\n\n    Example:\n        f() gives 1\n    """\n', True),
        ('def f():\n    """Add one. Example: ``f()`` -> ``1``"""\n', True),
        ('def f():\n    """Add one (see the Example section of g)."""\n', False),
        ('def f():\n    """Add.\n\n    Example:\n        >>> f()\n        1\n    """\n', False),
        ('"""Module.\n\nExample:\n    >>> 1 + 1\n    2\n"""\n', False),
    ],
)
def test_the_check_can_fail(docstring, bad):
    assert bool(unexecuted_examples(docstring, "x.py")) is bad
