"""The cache benchmark runs, checks its output against the uncached tokenizer and reports the
cache's own work per hit twice: over every request and once the admission policy has settled
(no timing is asserted)."""
from __future__ import annotations

import re

from labkit.bench import cache as bench_cache
from labkit.cache.prefix_tree import PrefixTree


def test_cache_bench_prints_both_hit_overheads(capsys):
    assert bench_cache.main(["--requests", "36", "--repeat", "1"]) == 0  # 0: every cached output identical
    out = capsys.readouterr().out
    for label in ("L1", "L0+L1"):
        line = next(line for line in out.splitlines() if line.startswith(f"{label} hit on customer_service"))
        assert re.search(r"= -?\d+% of the suffix encode \(median of 36 A/B pairs\)", line), line
        # the warm-up prompt stores its question too, so 31 of the 36 fill the node's first 32: 5 after
        assert re.search(r"once the policy has settled \(a new question stored 1 in 8\): -?\d+% \(5 pairs\)", line), line


def test_hit_overhead_counts_settled_requests_apart():
    cost = bench_cache.hit_overhead(n_requests=34)
    admit_after = PrefixTree(max_bytes=1).admit_after
    # the warm-up prompt's question is the policy prompt's first child: 31 requests fill 32
    assert cost["requests"] == 34 and cost["steady_requests"] == 34 - (admit_after - 1)
    assert cost["suffix_us"] > 0 and cost["hit_us"] > 0
