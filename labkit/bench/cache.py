"""``python -m labkit.bench cache``: ops/s uncached vs L0, L1 and L0+L1 on each workload.

Each configuration starts cold and encodes the workload's prompts in arrival order, the
way a router sees them (median of ``--repeat`` passes); every cached output is compared
with the uncached one in a separate, untimed pass.

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


def _pass_seconds(encode, prompts) -> float:
    """One pass over the prompts, results dropped at once as a router does once it has sent them."""
    started = time.perf_counter()
    for prompt in prompts:
        encode(prompt)
    return time.perf_counter() - started


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def run(name: str = "qwen2", engine: str = "hf", n_requests: int = 200, seed: int = 0,
        workloads=WORKLOADS, repeat: int = 3) -> list[dict]:
    """One row per workload: ops/s per configuration, hit rates, speedups, identical output.

    Timed passes drop their results; a separate untimed pass per configuration (cold, same
    order) checks that every cached Encoding equals the uncached one.
    """
    import labkit

    tok = labkit.load(name, engine=engine)
    rows = []
    for workload_name in workloads:
        workload = make_workload(workload_name, seed=seed, n_requests=n_requests)
        prompts = workload.prompts
        reference = [tok.encode(p) for p in prompts]
        uncached = _median([_pass_seconds(tok.encode, prompts) for _ in range(repeat)])
        row = {
            "workload": workload_name,
            "requests": len(prompts),
            "prefix_share": workload.shared_prefix_fraction(),
            "uncached_ops": len(prompts) / uncached,
        }
        identical = True
        for label, config in CONFIGS.items():
            seconds = _median([_pass_seconds(CachedTokenizer(tok, config).encode, prompts) for _ in range(repeat)])
            cached = CachedTokenizer(tok, config)  # cold again, for the check and the counts
            for prompt, want in zip(prompts, reference):
                got = cached.encode(prompt)
                identical &= got.ids == want.ids and got.offsets == want.offsets and got.tokens == want.tokens
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
