"""Run configurations through engines and hold every answer against the reference.

For each configuration and engine: ``labkit.load(path, engine=...)``; a ``LabkitError`` at
load is a *refusal* (its message names the component). Otherwise every string of the mixed
corpus is compared: ids, tokens and offsets with and without ``add_special_tokens``, and
``decode`` of the reference ids with and without ``skip_special_tokens``; where the reference
can read special tokens as plain text (``encode_unparsed``), ``parse_special=False`` too. One mismatch makes
the cell *differs*: a silent difference, which the tests never allow.
Introduced in notebook ``14_conformance_matrix``.

Example (labkit refuses a Split regex Oniguruma reads otherwise; engine=None falls back to tokenizers):
    >>> import tempfile
    >>> from pathlib import Path
    >>> from labkit.conformance.cases import all_cases
    >>> from labkit.conformance.runner import run_case
    >>> case = next(c for c in all_cases(["hf"]) if c.name == "hf/wordlevel-split-oniguruma-hex")
    >>> [(cell.engine, cell.status, cell.served_by) for cell in run_case(case, Path(tempfile.mkdtemp()), texts=["Hi"])]
    [('labkit', 'refused', ''), ('hf', 'exact', 'hf'), ('default', 'exact', 'hf')]
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import labkit
from labkit.conformance.cases import ConfigCase
from labkit.conformance.corpus import mixed_corpus
from labkit.core import LabkitError

DEFAULT_ENGINES = ("labkit", "hf", "default")
MAX_REPORTED = 3  # differences kept per cell for the message


@dataclass
class Cell:
    """One configuration x one engine: exact, refused or differs, with its counts.

    Example:
        >>> from labkit.conformance.runner import Cell
        >>> Cell("hf/wl", "labkit", "refused", message="... pre_tokenizer Digits ...")
        Cell(case='hf/wl', engine='labkit', status='refused', strings=0, comparisons=0, message='... pre_tokenizer Digits ...', served_by='', seconds=0.0, components=())
    """

    case: str
    engine: str
    status: str                 # "exact" | "refused" | "differs"
    strings: int = 0            # strings compared
    comparisons: int = 0        # single equality checks made
    message: str = ""           # the refusal, or the first differences
    served_by: str = ""         # for engine=None: the engine it picked
    seconds: float = 0.0
    components: tuple[tuple[str, str], ...] = ()


@dataclass
class MatrixResult:
    """Every cell of a run, with the views the notebook and the tests need.

    Example:
        >>> result = MatrixResult([Cell("hf/a", "labkit", "exact"), Cell("hf/a", "hf", "exact"), Cell("hf/b", "labkit", "refused")])
        >>> {key: value for key, value in result.summary().items() if key in ("configurations", "exact", "refused")}
        {'configurations': 2, 'exact': 2, 'refused': 1}
        >>> result.differences()
        []
    """

    cells: list[Cell] = field(default_factory=list)
    engines: tuple[str, ...] = DEFAULT_ENGINES
    seconds: float = 0.0
    strings: int = 0

    def summary(self) -> dict[str, int | float]:
        """Counts of configurations, strings, comparisons and cells by status."""
        status = Counter(c.status for c in self.cells)
        return {
            "configurations": len({c.case for c in self.cells}),
            "cells": len(self.cells),
            "exact": status["exact"],
            "refused": status["refused"],
            "differs": status["differs"],
            "strings": self.strings,
            "comparisons": sum(c.comparisons for c in self.cells),
            "seconds": round(self.seconds, 1),
        }

    def differences(self) -> list[Cell]:
        """The cells with a silent difference (the tests require none)."""
        return [c for c in self.cells if c.status == "differs"]

    def by_component(self) -> dict[tuple[str, str], dict[str, Counter]]:
        """(kind, label) -> engine -> Counter of statuses (and 'strings'): the matrix rows."""
        rows: dict[tuple[str, str], dict[str, Counter]] = {}
        for cell in self.cells:
            for component in cell.components:
                row = rows.setdefault(component, {})
                counter = row.setdefault(cell.engine, Counter())
                counter[cell.status] += 1
                counter["strings"] += cell.strings
        return dict(sorted(rows.items()))


def parse_seeds(text: str) -> list[int]:
    """Seeds for the random configurations' commands: ``"0:100"`` (a range), ``"7"``, or a comma
    list of both.

    Example:
        >>> from labkit.conformance.runner import parse_seeds
        >>> parse_seeds("2:5"), parse_seeds("7"), parse_seeds("0:3,9")
        ([2, 3, 4], [7], [0, 1, 2, 9])
    """
    seeds: list[int] = []
    for part in text.split(","):
        if ":" in part:
            start, stop = part.split(":")
            seeds.extend(range(int(start), int(stop)))
        elif part:
            seeds.append(int(part))
    return seeds


def _folder_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _reference_answers(reference, texts: Sequence[str]):
    """Per text: the encodings by (add_special_tokens, parse_special) and decode of the framed ids.

    parse_special=False is asked where it can matter: where the text holds a special token's
    spelling or the reference answers otherwise than with parse_special (elsewhere both are
    one path in labkit's engines, compared already)."""
    unparsed = getattr(reference, "encode_unparsed", None)  # a reference that can read specials as text
    spellings = tuple(getattr(reference, "special_spellings", ()))
    answers = []
    for text in texts:
        encoded = {(add, True): reference.encode(text, add) for add in (False, True)}
        if unparsed is not None:
            other = {(add, False): unparsed(text, add) for add in (False, True)}
            if any(s in text for s in spellings) or any(other[add, False] != encoded[add, True] for add in (False, True)):
                encoded.update(other)
        framed = encoded[True, True][0]
        decoded = {skip: reference.decode(framed, skip_special_tokens=skip) for skip in (False, True)}
        answers.append((encoded, framed, decoded))
    return answers


def _compare(tok, texts, answers, compare_offsets: bool) -> tuple[int, list[str]]:
    """Comparisons made and the differences found (empty: exact)."""
    comparisons = 0
    found: list[str] = []
    for text, (encoded, framed, decoded) in zip(texts, answers):
        try:
            for (add, parse), want in encoded.items():
                enc = tok.encode(text, add_special_tokens=add, parse_special=parse)
                got = (enc.ids, enc.tokens, [tuple(o) for o in enc.offsets])
                want = (want[0], want[1], [tuple(o) for o in want[2]])
                how = f"add_special_tokens={add}" + ("" if parse else " parse_special=False")
                for what, a, b in zip(("ids", "tokens", "offsets"), got, want):
                    if what == "offsets" and not compare_offsets:
                        continue
                    comparisons += 1
                    if a != b:
                        found.append(f"{text[:40]!r} {how} {what}: {str(a)[:120]} != reference {str(b)[:120]}")
            for skip, want in decoded.items():
                comparisons += 1
                got_text = tok.decode(framed, skip_special_tokens=skip)
                if got_text != want:
                    found.append(f"{text[:40]!r} decode(skip_special_tokens={skip}): {got_text[:80]!r} != reference {want[:80]!r}")
        except LabkitError as exc:
            comparisons += 1
            found.append(f"{text[:40]!r}: raised {exc} where the reference answered")
        if len(found) >= MAX_REPORTED:
            break
    return comparisons, found


def run_case(case: ConfigCase, workdir: Path, engines: Sequence[str] = DEFAULT_ENGINES,
             texts: Sequence[str] | None = None, *, botchan: int = 40) -> list[Cell]:
    """Build one configuration under ``workdir`` and compare every engine with the reference
    (on ``texts``, else the mixed corpus with ``botchan`` lines of the novel). An engine that
    loads as one already compared (``default`` picks one of the others) shares that cell's answer.

    Example (one string, two engines):
        >>> import tempfile
        >>> from labkit.conformance.cases import all_cases
        >>> case = next(c for c in all_cases(["hf"]) if c.name == "hf/wordlevel-whitespace")
        >>> [cell.status for cell in run_case(case, Path(tempfile.mkdtemp()), engines=("labkit", "hf"), texts=["a b"])]
        ['exact', 'exact']
    """
    folder = Path(workdir) / _folder_name(case.name)
    folder.mkdir(parents=True, exist_ok=True)
    path = case.build(folder)
    reference = case.reference(path)
    if texts is None:
        texts = mixed_corpus(case.specials, botchan=botchan)
    texts = list(dict.fromkeys([*texts, *case.texts]))
    answers = _reference_answers(reference, texts)
    cells = []
    compared: dict[tuple[type, str], Cell] = {}  # (class, engine) -> the cell that compared it
    for engine in engines:
        started = time.perf_counter()
        cell = Cell(case.name, engine, "exact", components=case.components)
        try:
            tok = labkit.load(path, engine=None if engine == "default" else engine)
        except LabkitError as exc:
            cell.status, cell.message = "refused", str(exc)
        else:
            cell.served_by = tok.engine
            same = compared.get((type(tok), tok.engine))
            if same is not None:  # "default" picked an engine already compared: same file, same answers
                cell.status, cell.message, cell.comparisons, cell.strings = (same.status, same.message,
                                                                           same.comparisons, same.strings)
            else:
                cell.comparisons, found = _compare(tok, texts, answers, case.compare_offsets)
                cell.strings = len(texts)
                if found:
                    cell.status, cell.message = "differs", "\n".join(found)
                compared[type(tok), tok.engine] = cell
        cell.seconds = time.perf_counter() - started
        cells.append(cell)
    return cells


def run_matrix(cases: Sequence[ConfigCase], workdir: Path, engines: Sequence[str] = DEFAULT_ENGINES,
               texts: Sequence[str] | None = None, *, botchan: int = 40) -> MatrixResult:
    """Every configuration x every engine (see :func:`run_case`).

    Example:
        >>> import tempfile
        >>> from labkit.conformance.cases import all_cases
        >>> cases = [c for c in all_cases(["hf"]) if c.name.startswith("hf/wordlevel-w")]
        >>> result = run_matrix(cases, Path(tempfile.mkdtemp()), engines=("labkit",), texts=["a b"])
        >>> [cell.case for cell in result.cells], result.differences()
        (['hf/wordlevel-whitespace', 'hf/wordlevel-whitespacesplit-lowercase'], [])
    """
    started = time.perf_counter()
    result = MatrixResult(engines=tuple(engines))
    for case in cases:
        cells = run_case(case, workdir, engines, texts, botchan=botchan)
        result.cells.extend(cells)
        result.strings += max((c.strings for c in cells), default=0)
    result.seconds = time.perf_counter() - started
    return result
