"""Benchmarks: each suite prints labkit next to the reference measured in the same run.

A single suite runs at its full size (``python -m labkit.bench bpe``: ~1 MB of botchan);
``all`` runs every suite with the small inputs of ``QUICK_ARGS`` so that the whole tour
takes a couple of minutes on a 2-core machine (``all --full`` for every suite at full size).

Example: ``python -m labkit.bench bpe``
"""
from __future__ import annotations

import argparse
import importlib
import time

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
    parser.add_argument("--quick", action="store_true", help="small inputs (see QUICK_ARGS); the default for all")
    parser.add_argument("--full", action="store_true", help="with all: every suite at its full size")
    args = parser.parse_args(argv)
    for flag in ("--quick", "--full"):  # `all --quick` reads as well as `--quick all`
        if args.suite == "all" and flag in args.rest:
            args.rest.remove(flag)
            setattr(args, flag[2:], True)
    quick = args.quick or (args.suite == "all" and not args.full)
    names = list(SUITES) if args.suite == "all" else [args.suite]
    status = 0
    started = time.perf_counter()
    for name in names:
        module = importlib.import_module(SUITES[name])
        print(f"== {name}{' (quick inputs)' if quick else ''} ==", flush=True)
        status |= module.main([*QUICK_ARGS.get(name, []), *args.rest] if quick else args.rest) or 0
    if len(names) > 1:
        print(f"\n{len(names)} suites in {time.perf_counter() - started:.0f} s", flush=True)
    return status
