"""``python -m labkit.bench SUITE``: run a benchmark suite and print labkit vs the reference.

Suites: bpe, spm, long, wordpiece, unigram, stream, stop, cache, serving, all.
"""
from __future__ import annotations

import sys

from labkit.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
