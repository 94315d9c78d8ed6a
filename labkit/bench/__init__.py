"""Benchmarks: each suite prints labkit next to the reference measured in the same run.

Example: ``python -m labkit.bench bpe``
"""
from __future__ import annotations

import argparse
import importlib

# suite name -> module with a ``main(argv) -> int`` function
SUITES = {
    "bpe": "labkit.bench.bpe",
    "spm": "labkit.bench.spm",
    "wordpiece": "labkit.bench.wordpiece",
    "unigram": "labkit.bench.unigram",
    "stream": "labkit.bench.stream",
    "stop": "labkit.bench.stop",
    "cache": "labkit.bench.cache",
    "serving": "labkit.bench.serving",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.bench", description=__doc__)
    parser.add_argument("suite", choices=[*SUITES, "all"])
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="options passed to the suite")
    args = parser.parse_args(argv)
    names = list(SUITES) if args.suite == "all" else [args.suite]
    status = 0
    for name in names:
        module = importlib.import_module(SUITES[name])
        print(f"== {name} ==", flush=True)
        status |= module.main(args.rest) or 0
    return status
