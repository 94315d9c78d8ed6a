"""``python -m labkit.bench cache``: ops/s uncached vs L0, L1 and L0+L1 on each workload.

Each configuration starts cold and encodes the workload's prompts in arrival order, the
way a router sees them; every cached output is compared with the uncached one.

Example: ``python -m labkit.bench cache --requests 100``
"""
from __future__ import annotations

import argparse
import time

from labkit.bench.harness import table
from labkit.bench.workloads import WORKLOADS, make_workload
from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer

CONFIGS = {
    "L0": CacheConfig(enable_l0=True),
    "L1": CacheConfig(enable_l1=True),
    "L0+L1": CacheConfig(enable_l0=True, enable_l1=True),
}


def _timed_pass(encode, prompts) -> tuple[float, list]:
    started = time.perf_counter()
    out = [encode(p) for p in prompts]
    return time.perf_counter() - started, out


def run(name: str = "qwen2", engine: str = "hf", n_requests: int = 200, seed: int = 0,
        workloads=WORKLOADS, repeat: int = 3) -> list[dict]:
    """One row per workload: ops/s per configuration, hit rates, speedups, identical output."""
    import labkit

    tok = labkit.load(name, engine=engine)
    rows = []
    for workload_name in workloads:
        workload = make_workload(workload_name, seed=seed, n_requests=n_requests)
        prompts = workload.prompts
        times = []
        for _ in range(repeat):
            seconds, reference = _timed_pass(tok.encode, prompts)
            times.append(seconds)
        uncached = sorted(times)[len(times) // 2]
        row = {
            "workload": workload_name,
            "requests": len(prompts),
            "prefix_share": workload.shared_prefix_fraction(),
            "uncached_ops": len(prompts) / uncached,
        }
        identical = True
        for label, config in CONFIGS.items():
            times = []
            for _ in range(repeat):
                cached = CachedTokenizer(tok, config)  # cold for every pass
                seconds, out = _timed_pass(cached.encode, prompts)
                times.append(seconds)
            seconds = sorted(times)[len(times) // 2]
            identical &= all(a.ids == b.ids and a.offsets == b.offsets for a, b in zip(reference, out))
            stats = cached.stats()
            row[f"{label}_ops"] = len(prompts) / seconds
            row[f"{label}_x"] = uncached / seconds
            if label == "L0+L1":
                row["L0_hit"] = stats["l0"]["hit_rate"]
                row["L1_hit"] = stats["l1"]["hit_rate"]
            if label == "L1":
                # the share of tokens served from cached prefixes: hit rates alone flatter a
                # cache whose hits are tiny prefixes such as a lone <|im_start|>
                reused, encoded = stats["prefix_tokens_reused"], stats["tokens_encoded"]
                row["L1_reuse"] = reused / max(1, reused + encoded)
        row["identical"] = identical
        rows.append(row)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.bench cache", description=__doc__)
    parser.add_argument("--name", default="qwen2", help="bundled tokenizer (default qwen2)")
    parser.add_argument("--engine", default="hf", help="engine behind the cache (default hf)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = run(args.name, args.engine, args.requests, args.seed, repeat=args.repeat)
    print(f"tokenization cache over engine={args.engine} on {args.name}, {args.requests} requests per workload")
    print(table(rows, ["workload", "prefix_share", "uncached_ops", "L0_ops", "L1_ops", "L0+L1_ops",
                       "L0_x", "L1_x", "L0+L1_x", "L0_hit", "L1_hit", "L1_reuse", "identical"]))
    return 0 if all(r["identical"] for r in rows) else 1
