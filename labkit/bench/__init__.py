"""Benchmarks: each suite prints labkit next to the reference measured in the same run.

A single suite runs at its full size (``python -m labkit.bench bpe``: ~1 MB of botchan);
``all`` runs every suite with the small inputs of ``QUICK_ARGS`` so that the whole tour
takes a couple of minutes on a 2-core machine (``all --full`` for every suite at full size).

From a shell: ``python -m labkit.bench bpe``
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from contextlib import contextmanager

# suite name -> module with a ``main(argv) -> int`` function
SUITES = {
    "bpe": "labkit.bench.bpe",
    "spm": "labkit.bench.spm",
    "long": "labkit.bench.long",
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
    "long": ["--mb", "0.05", "--repeat", "3"],
    "wordpiece": ["--mb", "0.1"],
    "unigram": ["--mb", "0.1"],
    "stream": ["--tokens", "20000", "--repeat", "1"],
    "stop": ["--tokens", "5000", "--repeat", "5"],
    "cache": ["--requests", "50", "--repeat", "1"],
    "serving": ["--quick"],
}


@contextmanager
def _named(prog: str):
    """Suites name their parsers ``python -m labkit.bench SUITE``; when called as ``prog``
    (``labkit bench``), say that instead in usage and errors."""
    original = argparse.ArgumentParser.__init__

    def renamed(self, *args, **kwargs):
        if isinstance(kwargs.get("prog"), str) and kwargs["prog"].startswith(DEFAULT_PROG):
            kwargs["prog"] = prog + kwargs["prog"][len(DEFAULT_PROG):]
        original(self, *args, **kwargs)

    argparse.ArgumentParser.__init__ = renamed
    try:
        yield
    finally:
        argparse.ArgumentParser.__init__ = original


DEFAULT_PROG = "python -m labkit.bench"


def main(argv: list[str] | None = None, prog: str = DEFAULT_PROG) -> int:
    """Run a suite (or ``all``). ``--quick`` and ``--full`` may stand anywhere on the line;
    every other option goes to the suite, before or after its name."""
    argv = list(sys.argv[1:] if argv is None else argv)
    flags = {flag: flag in argv for flag in ("--quick", "--full")}
    argv = [arg for arg in argv if arg not in flags]
    names = [arg for arg in argv if arg in SUITES or arg == "all"]
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=[*SUITES, "all"])
    parser.add_argument("--quick", action="store_true", help="small inputs (see QUICK_ARGS); the default for all")
    parser.add_argument("--full", action="store_true", help="with all: every suite at its full size")
    if not names:
        if any(arg in ("-h", "--help") for arg in argv) or not argv:
            parser.parse_args(argv)  # prints help, or the missing-suite error, and exits
        parser.error(f"choose a suite: {', '.join([*SUITES, 'all'])} (got {' '.join(argv)})")
    suite = names[0]
    rest = argv[: argv.index(suite)] + argv[argv.index(suite) + 1 :]
    if suite == "all" and any(arg in ("-h", "--help") for arg in rest):
        parser.parse_args(["--help"])  # all's own help (the suites' names), not the first suite's
    quick = flags["--quick"] or (suite == "all" and not flags["--full"])
    selected = list(SUITES) if suite == "all" else [suite]
    status = 0
    started = time.perf_counter()
    for name in selected:
        module = importlib.import_module(SUITES[name])
        print(f"== {name}{' (quick inputs)' if quick else ''} ==", flush=True)
        with _named(prog):
            status |= module.main([*QUICK_ARGS.get(name, []), *rest] if quick else rest) or 0
    if len(selected) > 1:
        print(f"\n{len(selected)} suites in {time.perf_counter() - started:.0f} s", flush=True)
    return status
