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

# --quick: small inputs per suite, so that ``all`` fits in a few minutes on a busy 2-core machine
QUICK_ARGS = {
    "bpe": ["--mb", "0.1"],
    "spm": ["--mb", "0.1"],
    "wordpiece": ["--mb", "0.1"],
    "unigram": ["--mb", "0.1"],
    "stream": ["--tokens", "20000", "--repeat", "1"],
    "stop": ["--tokens", "5000", "--repeat", "5"],
    "cache": ["--requests", "50", "--repeat", "1"],
    "serving": ["--quick"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.bench", description=__doc__)
    parser.add_argument("suite", choices=[*SUITES, "all"])
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="options passed to the suite")
    parser.add_argument("--quick", action="store_true", help="small inputs for every suite (see QUICK_ARGS)")
    args = parser.parse_args(argv)
    if args.suite == "all" and "--quick" in args.rest:  # `all --quick` reads as well as `--quick all`
        args.rest.remove("--quick")
        args.quick = True
    names = list(SUITES) if args.suite == "all" else [args.suite]
    status = 0
    for name in names:
        module = importlib.import_module(SUITES[name])
        print(f"== {name} ==", flush=True)
        status |= module.main([*QUICK_ARGS.get(name, []), *args.rest] if args.quick else args.rest) or 0
    return status
