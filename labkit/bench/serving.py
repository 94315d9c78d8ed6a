"""``python -m labkit.bench serving``: the tokenizer layer of a serving system, measured the
way a router's benchmark groups it, with labkit's engine beside the references in one run.

Groups: encode throughput by prompt size, batch vs single, concurrent encode and thread
scaling, decode, streaming decode over many tokens, latency distribution (p50/p90/p99),
stop-sequence overhead, memory per tokenizer, and cost versus input size (with the naive
O(n²) BPE against the heap version). A progress bar shows where it is.
Introduced in notebooks ``12_performance`` and ``15_serving_metrics``.

From a shell: ``python -m labkit.bench serving --quick``
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from tqdm.auto import tqdm

from labkit.bench.harness import corpus, median_seconds, table

# prompt sizes in characters, as a router sees them
SIZES = {"short": 120, "medium": 1_500, "long": 12_000}
ENGINES = {"qwen2": ("labkit", "hf", "tiktoken"), "llama-spm": ("labkit", "sentencepiece"),
           "minilm": ("labkit", "hf"), "gpt2": ("labkit", "hf", "tiktoken")}


def _prompts(n: int, size: int, seed: int = 0) -> list[str]:
    """n slices of botchan of ``size`` characters, at spread-out places."""
    text = corpus(0.3)
    step = max(1, (len(text) - size) // max(1, n))
    return [text[(i * step + seed * 97) % (len(text) - size):][:size] for i in range(n)]


def _load(name: str, engines) -> dict:
    import labkit

    loaded = {}
    for engine in engines:
        try:
            loaded[engine] = labkit.load(name, engine=engine)
        except labkit.LabkitError:
            continue  # an engine that cannot serve this vocabulary is left out of the table
    return loaded


def encode_throughput(toks, quick, bar):
    rows = []
    for label, size in SIZES.items():
        prompts = _prompts(8 if quick else 32, size)
        mb = sum(len(p.encode()) for p in prompts) / 1e6
        row = {"group": "encode", "prompt": label}
        for engine, tok in toks.items():
            for p in prompts:  # warm any cache: a router sees repeated words too
                tok.encode(p)
            row[engine] = mb / median_seconds(lambda: [tok.encode(p) for p in prompts], repeat=3)
            bar.update()
        rows.append(row)
    return rows, "MB/s"


def batch_vs_single(toks, quick, bar):
    prompts = _prompts(16 if quick else 64, SIZES["medium"])
    rows = []
    for engine, tok in toks.items():
        single = median_seconds(lambda: [tok.encode(p) for p in prompts], repeat=3)
        batch = median_seconds(lambda: tok.encode_batch(prompts), repeat=3)
        rows.append({"group": "batch", "engine": engine, "single_ops": len(prompts) / single,
                     "batch_ops": len(prompts) / batch, "batch_speedup": single / batch})
        bar.update()
    return rows, "prompts/s"


def thread_scaling(toks, quick, bar):
    prompts = _prompts(16 if quick else 64, SIZES["medium"])
    rows = []
    for engine, tok in toks.items():
        row = {"group": "threads", "engine": engine}
        for threads in (1, 2, 4, 8):
            def work():
                with ThreadPoolExecutor(threads) as pool:
                    list(pool.map(tok.encode, prompts))
            row[f"{threads}t_ops"] = len(prompts) / median_seconds(work, repeat=3)
        row["scaling_8t"] = row["8t_ops"] / row["1t_ops"]
        rows.append(row)
        bar.update()
    return rows, "prompts/s"


# each workload below is one loop over the engines, alike on purpose: a row per engine, one bar step
def decode_throughput(toks, quick, bar):
    text = corpus(0.05 if quick else 0.2)
    rows = []
    for engine, tok in toks.items():
        ids = tok.encode(text).ids
        seconds = median_seconds(lambda: tok.decode(ids), repeat=3)
        rows.append({"group": "decode", "engine": engine, "tokens": len(ids), "tokens_per_s": len(ids) / seconds})
        bar.update()
    return rows, "tokens/s"


def streaming(toks, quick, bar):
    from labkit.streaming.decode_stream import DecodeStream
    from labkit.streaming.stop import StopSequenceConfig, StopSequenceDecoder

    text = corpus(0.1 if quick else 0.4)
    rows = []
    for engine, tok in toks.items():
        ids = tok.encode(text).ids[: 20_000 if quick else 100_000]

        def stream():
            s = DecodeStream(tok, skip_special_tokens=True)  # the stop decoder's default
            for i in ids:
                s.step(i)
            s.flush()

        stops = [f"stop word {k}" for k in range(100)]
        config = StopSequenceConfig(stop_sequences=tuple(stops))

        def stopped():
            d = StopSequenceDecoder(tok, config, skip_special_tokens=True)
            for i in ids:
                d.process_token(i)
            d.flush()

        stream(), stopped()  # both start with the shared memos filled, as a server would
        plain = median_seconds(stream, repeat=3)
        with_stops = median_seconds(stopped, repeat=3)
        rows.append({"group": "stream", "engine": engine, "tokens": len(ids),
                     "stream_tokens_per_s": len(ids) / plain,
                     "stop100_tokens_per_s": len(ids) / with_stops,
                     "stop100_overhead": with_stops / plain})
        bar.update()
    return rows, "tokens/s"


def latency(toks, quick, bar):
    prompts = _prompts(50 if quick else 200, SIZES["medium"], seed=1)
    rows = []
    for engine, tok in toks.items():
        for p in prompts[:10]:
            tok.encode(p)
        samples = []
        for p in prompts:
            started = time.perf_counter()
            tok.encode(p)
            samples.append(time.perf_counter() - started)
        q = statistics.quantiles(samples, n=100, method="inclusive")
        rows.append({"group": "latency", "engine": engine, "p50_ms": q[49] * 1e3, "p90_ms": q[89] * 1e3,
                     "p99_ms": q[98] * 1e3, "max_ms": max(samples) * 1e3})
        bar.update()
    return rows, "ms"


def memory(name, engines, bar):
    """Resident memory a fresh process gains by loading the tokenizer (Rust and C++ included)."""
    rows = []
    for engine in engines:
        code = (
            "import labkit, labkit.bench.serving as s; s.import_engines(); before = s.rss_bytes(); "
            f"t = labkit.load({name!r}, engine={engine!r}); t.encode('warm up ' * 50); "
            "print(s.rss_bytes() - before)"
        )
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        if result.returncode == 0:
            rows.append({"group": "memory", "engine": engine, "rss_mb": int(result.stdout.split()[-1]) / 2**20})
        bar.update()
    return rows, "MB"


def import_engines() -> None:
    """Import every engine module, so a memory figure counts the tokenizer, not the code."""
    import importlib

    from labkit.factory import LABKIT_ENGINES, REFERENCE_ENGINES

    importlib.import_module("labkit.formats.detect")
    for spec in (*LABKIT_ENGINES.values(), *REFERENCE_ENGINES.values()):
        try:
            importlib.import_module(spec.split(":")[0])
        except ImportError:
            pass


def rss_bytes() -> int:
    """This process's resident set size, from /proc."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    import os

    return pages * os.sysconf("SC_PAGE_SIZE")


def input_scaling(toks, quick, bar):
    sizes = (1_000, 4_000, 16_000) if quick else (1_000, 4_000, 16_000, 64_000)
    rows = []
    text = corpus(0.1)
    for size in sizes:
        row = {"group": "scaling", "chars": size}
        for engine, tok in toks.items():
            piece = text[:size]
            row[engine + "_ms"] = median_seconds(lambda: tok.encode(piece), repeat=3) * 1e3
            bar.update()
        rows.append(row)
    return rows, "ms per encode"


def naive_vs_heap(quick, bar):
    """One long pre-token (no spaces) through both BPE forms: O(n²) against O(n log n)."""
    import labkit
    from labkit.algorithms import bpe

    tok = labkit.load("gpt2", engine="labkit")
    rows = []
    for n in ((64, 256, 1024) if quick else (64, 256, 1024, 4096)):
        parts = bpe.byte_parts(("abcdefgh" * n)[:n].encode())
        naive = median_seconds(lambda: bpe.bpe_naive(parts, tok.rank), repeat=1)
        heap = median_seconds(lambda: bpe.bpe_heap(parts, tok.rank), repeat=1)
        rows.append({"group": "naive_vs_heap", "bytes": n, "naive_ms": naive * 1e3, "heap_ms": heap * 1e3,
                     "naive_over_heap": naive / heap})
        bar.update()
    return rows, "ms"


# per group: the column compared, and whether more is better; ratios are against the hf engine
_RATIO_OF = {"batch": ("single_ops", True), "threads": ("1t_ops", True), "decode": ("tokens_per_s", True),
             "stream": ("stream_tokens_per_s", True), "latency": ("p50_ms", False), "memory": ("rss_mb", False)}


def add_ratios(group: str, rows: list[dict], reference: str = "hf") -> list[dict]:
    """Add each engine's ratio to the reference engine: ``x_hf`` > 1 means better than hf."""
    if group == "encode":
        for row in rows:
            if reference in row and "labkit" in row:
                row["labkit_x_" + reference] = row["labkit"] / row[reference]
    elif group == "scaling":
        for row in rows:
            if f"{reference}_ms" in row and "labkit_ms" in row:
                row["labkit_x_" + reference] = row[f"{reference}_ms"] / row["labkit_ms"]
    elif group in _RATIO_OF:
        column, more_is_better = _RATIO_OF[group]
        base = next((r[column] for r in rows if r.get("engine") == reference), None)
        for row in rows:
            if base and row.get(column):
                row["x_" + reference] = row[column] / base if more_is_better else base / row[column]
    return rows


GROUPS = ("encode", "batch", "threads", "decode", "stream", "latency", "memory", "scaling", "naive_vs_heap")


def run(name: str = "qwen2", quick: bool = False, groups=GROUPS, progress: bool = True) -> dict[str, list[dict]]:
    """Run the chosen groups; {group: rows}. Every row names engines side by side."""
    engines = ENGINES.get(name, ("labkit", "hf"))
    toks = _load(name, engines)
    n_sizes = 3 if quick else 4
    total = sum({
        "encode": len(SIZES) * len(toks), "batch": len(toks), "threads": len(toks), "decode": len(toks),
        "stream": len(toks), "latency": len(toks), "memory": len(toks), "scaling": n_sizes * len(toks),
        "naive_vs_heap": 3 if quick else 4,
    }[g] for g in groups)
    out: dict[str, list[dict]] = {}
    with tqdm(total=total, desc=f"serving bench ({name})", disable=not progress, file=sys.stderr) as bar:
        for group in groups:
            bar.set_postfix_str(group)
            if group == "encode":
                out[group] = encode_throughput(toks, quick, bar)[0]
            elif group == "batch":
                out[group] = batch_vs_single(toks, quick, bar)[0]
            elif group == "threads":
                out[group] = thread_scaling(toks, quick, bar)[0]
            elif group == "decode":
                out[group] = decode_throughput(toks, quick, bar)[0]
            elif group == "stream":
                out[group] = streaming(toks, quick, bar)[0]
            elif group == "latency":
                out[group] = latency(toks, quick, bar)[0]
            elif group == "memory":
                out[group] = memory(name, list(toks), bar)[0]
            elif group == "scaling":
                out[group] = input_scaling(toks, quick, bar)[0]
            elif group == "naive_vs_heap":
                out[group] = naive_vs_heap(quick, bar)[0]
            add_ratios(group, out[group])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.bench serving", description=__doc__)
    parser.add_argument("--name", default="qwen2", choices=sorted(ENGINES))
    parser.add_argument("--quick", action="store_true", help="fewer and shorter inputs (about a minute)")
    parser.add_argument("--groups", default=",".join(GROUPS), help="comma-separated subset of " + ",".join(GROUPS))
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    groups = [g for g in args.groups.split(",") if g]
    unknown = set(groups) - set(GROUPS)
    if unknown:
        parser.error(f"unknown groups: {', '.join(sorted(unknown))}")
    results = run(args.name, args.quick, groups)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    for group, rows in results.items():
        if not rows:
            continue
        columns = list(dict.fromkeys(k for r in rows for k in r if k != "group"))
        print(f"\n-- {group} --")
        print(table(rows, columns))
    return 0
