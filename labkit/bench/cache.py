"""``python -m labkit.bench cache``: requests/s uncached vs L0, L1 and L0+L1 on each workload,
the cache's own cost per hit next to the suffix encode it cannot avoid, and the cost of a
miss that reuses nothing.

Each repeat times one cold pass per configuration (uncached included) in a rotating order,
so every configuration sees the same machine load (A/B interleaved); the figures are
medians of ``--repeat`` passes in CPU time (``time.process_time``). Each cache is made once
and emptied before each of its passes: made anew right before a pass (27 ms of hashing the
vocabulary, tens of MB of temporary strings), it left the next requests' encodes 9% slower. Every cached output is
compared with the uncached one in a separate, untimed pass.

From a shell: ``python -m labkit.bench cache --requests 100``
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from labkit.bench.harness import table
from labkit.bench.workloads import WORKLOADS, make_workload
from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer
from labkit.cache.prefix_tree import ADMIT_ONE_IN

CONFIGS = {
    "L0": CacheConfig(enable_l0=True),
    "L1": CacheConfig(enable_l1=True),
    "L0+L1": CacheConfig(enable_l0=True, enable_l1=True),
}


def _pass_seconds(encode, prompts) -> float:
    """CPU seconds of one pass over the prompts, results dropped at once as a router does."""
    started = time.process_time()
    for prompt in prompts:
        encode(prompt)
    return time.process_time() - started


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _timed_passes(tok, prompts, repeat: int) -> dict[str, float]:
    """Median CPU seconds per configuration, each repeat running all of them in a rotated order.
    Each cache is made once, as a server makes it, and emptied before each of its passes."""
    labels = ["uncached", *CONFIGS]
    caches = {label: CachedTokenizer(tok, config) for label, config in CONFIGS.items()}
    seconds: dict[str, list[float]] = {label: [] for label in labels}
    for index in range(repeat):
        order = labels[index % len(labels):] + labels[: index % len(labels)]
        for label in order:
            if label == "uncached":
                encode = tok.encode
            else:
                caches[label].clear()
                encode = caches[label].encode
            seconds[label].append(_pass_seconds(encode, prompts))
    return {label: _median(values) for label, values in seconds.items()}


def run(name: str = "qwen2", engine: str = "hf", n_requests: int = 200, seed: int = 0,
        workloads=WORKLOADS, repeat: int = 5) -> list[dict]:
    """One row per workload: requests/s per configuration, speedups, hit rates, identical output."""
    import labkit

    tok = labkit.load(name, engine=engine)
    rows = []
    for workload_name in workloads:
        workload = make_workload(workload_name, seed=seed, n_requests=n_requests)
        prompts = workload.prompts
        reference = [tok.encode(p) for p in prompts]
        medians = _timed_passes(tok, prompts, repeat)
        row = {
            "workload": workload_name,
            "requests": len(prompts),
            "prefix_share": workload.shared_prefix_fraction(),
            "uncached_ops": len(prompts) / medians["uncached"],
        }
        identical = True
        for label, config in CONFIGS.items():
            cached = CachedTokenizer(tok, config)  # cold again, for the check and the counts
            for prompt, want in zip(prompts, reference):
                got = cached.encode(prompt)
                identical &= got.ids == want.ids and got.offsets == want.offsets and got.tokens == want.tokens
            stats = cached.stats()
            row[f"{label}_ops"] = len(prompts) / medians[label]
            row[f"{label}_x"] = medians["uncached"] / medians[label]
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


def hit_overhead(name: str = "qwen2", engine: str = "hf", n_requests: int = 200, seed: int = 0,
                 config: CacheConfig = CONFIGS["L1"]) -> dict:
    """Customer-service shape: per request, the suffix the cache must encode anyway and the
    whole cached call, timed back to back (A/B, the order alternating, the library's own word
    cache filled with the suffix's words before both); medians in microseconds of CPU time.

    Also the same medians over the requests after the admission policy has settled
    (``steady_*``): the policy stores every new question below the policy prompt until that
    node has ``admit_after`` children, then 1 in ``ADMIT_ONE_IN`` when none is found again,
    so the first requests pay for a store each and the rest mostly do not.

    Example (two requests, one A/B pair; timings vary, so only the keys are shown):
        >>> sorted(hit_overhead(n_requests=2))  # doctest: +NORMALIZE_WHITESPACE
        ['hit_us', 'overhead_share', 'overhead_us', 'requests', 'steady_overhead_share', 'steady_requests',
         'suffix_us']
    """
    import labkit

    tok = labkit.load(name, engine=engine)
    prompts = make_workload("customer_service", seed=seed, n_requests=n_requests + 1).prompts
    cached = CachedTokenizer(tok, config)
    cached.encode(prompts[0])  # the shared system prompt is cached: every later request is a hit
    suffix_us, hit_us, settled = [], [], []
    admit_after = cached.l1.admit_after or 0
    for index, prompt in enumerate(prompts[1:]):
        node, _ = cached.cached_prefix(prompt)
        suffix = prompt[node.end:] if node is not None else prompt
        settled.append(node is not None and node.added >= admit_after)
        # the library keeps a cache of words too: fill it with the suffix's words first, so the
        # suffix encode inside the hit costs what the one beside it does (else the second call
        # of each pair gets the first one's words for free, and the difference is not the cache's)
        tok.encode(suffix)
        pair = [("suffix", lambda: tok.encode(suffix)), ("hit", lambda: cached.encode(prompt))]
        for label, call in (pair if index % 2 else pair[::-1]):
            started = time.process_time_ns()
            call()
            (suffix_us if label == "suffix" else hit_us).append((time.process_time_ns() - started) / 1e3)
    suffix_median, hit_median = _median(suffix_us), _median(hit_us)
    steady = [(s, h) for s, h, ok in zip(suffix_us, hit_us, settled) if ok]
    steady_share = None
    if steady:
        steady_suffix = _median([s for s, _ in steady])
        steady_share = (_median([h for _, h in steady]) - steady_suffix) / steady_suffix
    return {"suffix_us": suffix_median, "hit_us": hit_median, "overhead_us": hit_median - suffix_median,
            "overhead_share": (hit_median - suffix_median) / suffix_median, "requests": len(hit_us),
            "steady_overhead_share": steady_share, "steady_requests": len(steady)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.bench cache", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="qwen2", help="bundled tokenizer (default qwen2)")
    parser.add_argument("--engine", default="hf", help="engine behind the cache (default hf)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5, help="timed passes per configuration (median)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.requests < 2 or args.repeat < 1:
        parser.error("--requests must be >= 2 and --repeat >= 1")
    print(f"tokenization cache over engine={args.engine} on {args.name}, {args.requests} requests per workload, "
          f"CPU time, median of {args.repeat} interleaved passes, load average {os.getloadavg()[0]:.2f}")
    rows = run(args.name, args.engine, args.requests, args.seed, repeat=args.repeat)
    print(table(rows, ["workload", "prefix_share", "uncached_ops", "L0_ops", "L1_ops", "L0+L1_ops",
                       "L0_x", "L1_x", "L0+L1_x", "L0_hit", "L1_hit", "L1_reuse", "identical"]))
    for label in ("L1", "L0+L1"):
        cost = hit_overhead(args.name, args.engine, args.requests, args.seed, CONFIGS[label])
        steady = ("" if cost["steady_overhead_share"] is None else
                  f"; once the policy has settled (a new question stored 1 in {ADMIT_ONE_IN}): "
                  f"{cost['steady_overhead_share']:.0%} ({cost['steady_requests']} pairs)")
        print(f"{label} hit on customer_service: {cost['hit_us']:.1f} us per request, of which the suffix encode "
              f"{cost['suffix_us']:.1f} us; the cache's own work {cost['overhead_us']:.1f} us "
              f"= {cost['overhead_share']:.0%} of the suffix encode (median of {cost['requests']} A/B pairs){steady}")
    no_reuse = next(r for r in rows if r["workload"] == "no_reuse")
    for label in CONFIGS:
        print(f"{label} on no_reuse (every request a miss): {1 / no_reuse[f'{label}_x']:.3f}x the uncached time")
    print(f"load average after the run: {os.getloadavg()[0]:.2f}")
    return 0 if all(r["identical"] for r in rows) else 1
