"""``python -m labkit.conformance``: the whole conformance matrix in one run, with its totals.

Every registered configuration (tokenizer.json pipelines, SentencePiece trainer options,
GGUF pre-tokenizer types) is built in a temporary folder and served by each engine asked
for; each cell is exact, refused at load, or differs. Prints the totals (configurations,
cells, strings, comparisons), the cells by family, engine and status, and the first
differences if any; exit status 1 when a cell differs. Introduced in notebook
``14_conformance_matrix``.

From a shell: ``python -m labkit.conformance --botchan 40`` (about half a minute on 2 cores).
"""
from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from labkit.conformance.cases import all_cases, families
from labkit.conformance.runner import run_matrix

ENGINES = ("labkit", "hf", "tiktoken", "sentencepiece", "default")


def main(argv: list[str] | None = None) -> int:
    """Run the matrix and print its totals; 1 if any cell differs (``tests/test_conformance_main.py``)."""
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance", description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=None, help=f"comma-separated, of: {', '.join(sorted(families()))} (default: all)")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated engines (default: %(default)s)")
    parser.add_argument("--botchan", type=int, default=40, help="botchan lines in each configuration's corpus")
    args = parser.parse_args(argv)
    chosen = args.families.split(",") if args.families else None
    cases = all_cases(chosen)
    with tempfile.TemporaryDirectory(prefix="labkit-conformance-") as folder:
        result = run_matrix(cases, Path(folder), engines=tuple(args.engines.split(",")), botchan=args.botchan)
    summary = result.summary()
    for key in ("configurations", "cells", "exact", "refused", "differs", "strings", "comparisons", "seconds"):
        print(f"{key:15} {summary[key]:>9,}")
    by_cell = Counter((cell.case.split("/", 1)[0], cell.engine, cell.status) for cell in result.cells)
    for (family, engine, status), count in sorted(by_cell.items()):
        print(f"  {family:5} {engine:14} {status:8} {count:4}")
    for cell in result.differences()[:5]:
        print(f"differs: {cell.case} on {cell.engine}: {cell.message.splitlines()[0][:300]}")
    return 1 if summary["differs"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
