# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 15 · Serving metrics: latency, threads, the output path, and what to export
#
# Notebook 12 measured what the tokenizer layer costs per megabyte: throughput, the word
# cache, input size and memory. This notebook looks at the same layer the way a serving
# system meets it — one request at a time, from many threads, on the way out as well as on
# the way in — and ends with the Prometheus metrics labkit can export for an operator.
#
# **Why it comes last.** It draws on the whole serving side of the book: the streaming
# decoder of notebook 08, the stop jail of 09, the cache of 10 and the benchmarks of 12. It
# was split from notebook 12 (one notebook of about half an hour's reading); giving it the
# next free number rather than 13 keeps the numbers that the package's docstrings cite
# ("Introduced in notebook 13_where_vocabularies_come_from") stable. Notebooks 13 and 14 do
# not need it, so reading it after them loses nothing.
#
# **Learning goals**
# - read a latency distribution (p50, p90, p99) rather than a mean;
# - see what the GIL means for a tokenizer: which engines let other threads run;
# - know what batching, streaming decode and stop strings cost a server;
# - turn on `labkit.metrics` and read the exposition text a Prometheus server scrapes.
#
# **How to read the numbers.** As in notebook 12, this runs on a shared machine: every
# timing cell is excluded from the notebook's regression test, and the claims the text
# makes are checked as inequalities with a wide margin. `python -m labkit.bench serving`
# (and `stream`, `stop`) run the full suites.

# %%
import statistics
import sys
import threading
import time
import types

import matplotlib.pyplot as plt
import pandas as pd

from labkit.algorithms import bpe
from labkit.bench import serving
from labkit.bench import stop as stop_bench
from labkit.bench import stream as stream_bench
from labkit.bench.harness import best_ms, corpus
from labkit.bench.probes import ids_only  # each library's own ids-only call (notebook 12)

TEXT = corpus(0.3)        # botchan.txt, repeated: English prose
pd.set_option("display.precision", 3)
colors = {"labkit": "#4c72b0", "hf": "#dd8452", "tiktoken": "#55a868", "sentencepiece": "#c44e52"}

# %% [markdown]
# The tokenizers: Qwen2 with the three engines that serve it, GPT-2's labkit and
# reference engines for the GIL probe, and Llama-2's SentencePiece model served by
# `sentencepiece`. Every engine gives the same ids (notebook 12 §1 checks it on every
# bundled vocabulary; here once more on Qwen2).

# %%
ENGINES = {"qwen2": ("labkit", "hf", "tiktoken"), "gpt2": ("labkit", "hf", "tiktoken"),
           "llama-spm": ("sentencepiece",)}
toks = {(name, engine): labkit.load(name, engine=engine) for name, engines in ENGINES.items() for engine in engines}
qwen = {engine: toks["qwen2", engine] for engine in ENGINES["qwen2"]}
reference = qwen["hf"].encode(TEXT[:12_000]).ids
assert all(list(ids_only(tok)(TEXT[:12_000])) == reference for tok in qwen.values())
print(f"Qwen2: {len(reference):,} tokens for 12,000 characters, the same ids from", ", ".join(qwen))

# %% [markdown]
# ## 1. Latency distributions
#
# A router cares less about the mean than about the tail: the p99 latency is what one
# request in a hundred waits. Here each engine on Qwen2 encodes 60 prompts of 1,500
# characters, one at a time, and every call is timed. (These prompts reuse botchan's
# words, so labkit's word cache is warm: its latency here is mostly cache lookups.) The
# CDF (the share of calls faster than x) shows the whole distribution; the table gives
# p50/p90/p99.

# %% tags=["nbval-ignore-output"]
def prompts(n, size, seed=0):
    """n slices of botchan, ``size`` characters each, spread over the text."""
    step = (len(TEXT) - size) // n
    return [TEXT[i * step + seed:][:size] for i in range(n)]

latency_prompts = prompts(60, 1_500)
samples = {}
for engine in ENGINES["qwen2"]:
    tok = toks["qwen2", engine]
    for p in latency_prompts[:10]:
        tok.encode(p)  # warm up
    times = []
    for p in latency_prompts:
        started = time.perf_counter()
        tok.encode(p)
        times.append((time.perf_counter() - started) * 1e3)
    samples[engine] = times

def quantiles(times):
    q = statistics.quantiles(times, n=100, method="inclusive")
    return {"p50_ms": q[49], "p90_ms": q[89], "p99_ms": q[98], "max_ms": max(times)}

latency = pd.DataFrame({engine: quantiles(times) for engine, times in samples.items()}).T
fig, ax = plt.subplots(figsize=(7, 3.5))
for engine, times in samples.items():
    ordered = sorted(times)
    ax.step(ordered, [(k + 1) / len(ordered) for k in range(len(ordered))], where="post",
            label=engine, color=colors[engine])
ax.set_xscale("log"); ax.set_xlabel("encode latency, ms (log)"); ax.set_ylabel("share of calls")
ax.set_title("Qwen2, 1,500-character prompts: latency CDF"); ax.legend(); ax.grid(alpha=0.3)
plt.show()
latency

# %% [markdown]
# For prompts of one size the work per call is nearly the same, so the bulk of each curve
# is steep; what stretches the tail to the right is the machine (other processes, the
# garbage collector, the OS scheduler), and it hits the fast engines as hard as the slow.
# Latency grows with the prompt, so a router that mixes short chat turns with long
# documents sees a tail made of the long ones. Check: the same engines on prompts 8x
# longer take several times longer at the median.

# %% tags=["nbval-ignore-output"]
long_prompts = prompts(12, 12_000, seed=7)
growth = {}
for engine in ENGINES["qwen2"]:
    tok = toks["qwen2", engine]
    long_times = []
    for p in long_prompts:
        started = time.perf_counter()
        tok.encode(p)
        long_times.append((time.perf_counter() - started) * 1e3)
    growth[engine] = statistics.median(long_times) / latency.loc[engine, "p50_ms"]
    print(f"{engine}: median {statistics.median(long_times):.1f} ms for 12,000 characters, "
          f"{growth[engine]:.1f}x its median for 1,500")
assert all(g > 2 for g in growth.values())


# %% [markdown]
# ## 2. Threads and the GIL
#
# CPython runs Python bytecode in one thread at a time: a thread must hold the global
# interpreter lock (GIL). A library written in Rust or C++ can *release* the GIL while
# its own code runs, and then other Python threads run at the same time. Whether a
# tokenizer releases it decides whether a threaded server can tokenize in parallel.
#
# A timing benchmark on a busy machine is a noisy way to find out. A direct test: make
# forced GIL switches rare (`sys.setswitchinterval(30)`), start a second thread that
# counts in a Python loop, then call the engine once and see how far the counter moved
# *during* the call. Pure Python never lets go of the GIL, so the counter stands still;
# a call that releases the GIL lets the counter run.

# %%
import inspect
from labkit.bench.probes import lets_others_run, steps_beside

print(inspect.getsource(steps_beside))

gpt2 = toks["gpt2", "labkit"]
long_word = bpe.byte_parts(("abcdefgh" * 600).encode())
hf_gpt2 = toks["gpt2", "hf"].backend
probes = {
    "labkit: bpe_heap (pure Python)": lambda: [bpe.bpe_heap(long_word, gpt2.rank) for _ in range(5)],
    "tiktoken: encode_ordinary": lambda: [toks["gpt2", "tiktoken"].backend.encode_ordinary(TEXT[:60_000]) for _ in range(3)],
    "sentencepiece: encode": lambda: toks["llama-spm", "sentencepiece"].backend.encode(TEXT[:60_000]),
    "tokenizers: encode (one text)": lambda: hf_gpt2.encode(TEXT[:60_000]),
    "tokenizers: encode_batch": lambda: hf_gpt2.encode_batch([TEXT[:6_000]] * 10),
}
# a release shows as soon as one run moves the counter; a busy machine may starve it in one run
releases = {label: lets_others_run(fn) for label, fn in probes.items()}
pd.Series(releases, name="other threads run during the call")

# %%
assert not releases["labkit: bpe_heap (pure Python)"]
assert releases["tiktoken: encode_ordinary"] and releases["sentencepiece: encode"]
assert releases["tokenizers: encode_batch"] and not releases["tokenizers: encode (one text)"]

# %% [markdown]
# So (with the library versions installed here): tiktoken and sentencepiece release the
# GIL for an encode; `tokenizers` releases it in `encode_batch` (where it also uses its own
# thread pool) but holds it for a single `encode`; and labkit's Python merges never
# release it. (Does labkit's full `encode` ever let go of it? Exercise 2 at the end asks.)
#
# Now the timing view: 32 prompts of 3,000 characters encoded by a pool of 1, 2 and 4
# threads, on Qwen2, labkit's surface next to the raw library calls (best of 5 runs each;
# `labkit bench serving --groups threads` measures the same with medians). On an idle
# machine with C cores, a call that releases the GIL can scale up to about C times; one
# that holds it stays at 1x or below (threads only add switching). This machine has 2
# cores shared with other work, so the timing is only suggestive; the probe above is the
# evidence.

# %% tags=["nbval-ignore-output"]
from concurrent.futures import ThreadPoolExecutor

callers = {
    "labkit encode": qwen["labkit"].encode,
    "tokenizers encode (ids)": ids_only(qwen["hf"]),
    "tiktoken encode_ordinary": ids_only(qwen["tiktoken"]),
}
thread_prompts = prompts(32, 3_000, seed=3)
pools = {n: ThreadPoolExecutor(n) for n in (1, 2, 4)}
rows = []
for label, encode in callers.items():
    for p in thread_prompts:
        encode(p)  # warm up
    best = {n: best_ms(lambda: list(pool.map(encode, thread_prompts)), 5) for n, pool in pools.items()}
    rows.append({"caller": label, **{f"{n} threads, prompts/s": len(thread_prompts) / best[n] * 1e3 for n in pools},
                 **{f"x{n}": best[1] / best[n] for n in (2, 4)}})
for pool in pools.values():
    pool.shutdown()
threads = pd.DataFrame(rows).set_index("caller")
fig, ax = plt.subplots(figsize=(6, 3.2))
for label, row in threads.iterrows():
    ax.plot([1, 2, 4], [1.0, row["x2"], row["x4"]], marker="o", label=label)
ax.set_xscale("log", base=2); ax.set_xticks([1, 2, 4], ["1", "2", "4"]); ax.set_xlabel("threads")
ax.set_ylabel("throughput / 1 thread"); ax.axhline(1, color="gray", lw=0.8); ax.legend()
ax.set_title("thread scaling (Qwen2, 3,000 chars)")
plt.show()
threads


# %% [markdown]
# ## 3. Batches and decoding
#
# Two more of the router benchmark's groups, run with the serving suite's own functions on
# the Qwen2 tokenizers loaded above (`labkit bench serving` runs them at full size):
# **batch vs single** — 16 prompts of 1,500 characters encoded one by one, then with one
# `encode_batch` call — and **decode** throughput over about 50 KB of ids. The raw
# `tokenizers.Tokenizer` is added as a fourth row for the batch group.

# %% tags=["nbval-ignore-output"]
quiet = types.SimpleNamespace(update=lambda *a: None)  # the suite's progress bar, silenced
raw_hf = types.SimpleNamespace(encode=qwen["hf"].backend.encode, encode_batch=qwen["hf"].backend.encode_batch)
batch_rows, _ = serving.batch_vs_single({**qwen, "tokenizers (raw)": raw_hf}, True, quiet)
decode_rows, _ = serving.decode_throughput(qwen, True, quiet)
pd.DataFrame(batch_rows).drop(columns="group").set_index("engine").join(
    pd.DataFrame(decode_rows).drop(columns="group").set_index("engine"))

# %% [markdown]
# Through labkit's surface, `encode_batch` is a loop over `encode` for the labkit, tiktoken
# and sentencepiece engines, so there it cannot beat single calls. The hf engine hands the
# whole batch to `tokenizers.Tokenizer.encode_batch`, which works on its own thread pool,
# in Rust, without the GIL (section 2 checks that): that is where batching can pay, on a
# machine with idle cores. Its answer is still exactly the loop's, `Encoding` for
# `Encoding`. Decoding is a join of token bytes and one UTF-8 decode: cheap for every engine.

# %%
batch_prompts = [TEXT[i * 1_000 :][:500] + "<|im_end|>" for i in range(8)]
for parse_special in (True, False):
    assert qwen["hf"].encode_batch(batch_prompts, parse_special=parse_special) == [
        qwen["hf"].encode(p, parse_special=parse_special) for p in batch_prompts]
print("hf encode_batch == loop over encode, for", len(batch_prompts), "prompts, parse_special True and False")


# %% [markdown]
# ## 4. Streaming decode and stop sequences
#
# On the way out, a server detokenizes one id at a time (`labkit.DecodeStream`, notebook
# 08) and watches for stop strings (`labkit.StopSequenceDecoder`, notebook 09). Their
# cost is paid per generated token, so it must stay small and flat. The stream suite
# compares labkit's `DecodeStream` with `tokenizers.decoders.DecodeStream` over the same
# engine; "flat" is the time of the last 10% of the ids over the first 10% (about 1 when
# the cost per token does not grow with the length of the output).

# %% tags=["nbval-ignore-output"]
qwen_hf = toks["qwen2", "hf"]
stream_ids = stream_bench.corpus_ids(qwen_hf, 6_000)
assert stream_bench.check_same_text(qwen_hf, stream_ids)
stream_row = stream_bench.measure(qwen_hf, stream_ids, repeat=1)
assert stream_row["flat labkit"] < 2  # the last 10% of the ids cost about what the first 10% did
pd.Series(stream_row, name="qwen2, 6,000 ids")

# %% [markdown]
# The stop suite puts the same ids through a plain `DecodeStream` and through the stop
# decoder with 1, 10 and 100 stop strings (chosen to start like the text often does, so
# the jail is busy), and through the simple alternative: hold back `max(len) - 1`
# characters and `find` each stop string. Times are CPU time, rounds interleaved.

# %% tags=["nbval-ignore-output"]
stop_ids = gpt2.encode(TEXT[:20_000]).ids[:4_000]
stop_rows = pd.DataFrame(stop_bench.measure(gpt2, stop_ids, (1, 10, 100), repeat=3, text=gpt2.decode(stop_ids)))
stop_rows

# %% tags=["nbval-ignore-output"]
def stop_ratio(variant, k):
    return float(stop_rows[(stop_rows.variant == variant) & (stop_rows.stops == k)]["ratio"].iloc[0])

jail_1, jail_100 = stop_ratio("StopSequenceDecoder (jail)", 1), stop_ratio("StopSequenceDecoder (jail)", 100)
hold_100 = stop_ratio("fixed hold-back + find", 100)
print(f"stop decoder vs plain stream: {jail_1:.2f}x with 1 stop, {jail_100:.2f}x with 100; "
      f"hold-back + find with 100: {hold_100:.1f}x")
assert jail_100 < 4 and jail_100 < 2 * jail_1  # the automaton's cost hardly depends on the count
assert hold_100 > 2 * jail_100                 # one find per stop string per chunk does


# %% [markdown]
# ## 5. Metrics: what a serving system exports
#
# `labkit.metrics` records, when enabled, what an operator watches: encode and decode
# durations, tokens and characters per encode, stream steps and the steps that held text
# back for an unfinished UTF-8 character, stop detections by kind, cache lookups by level
# and result, load durations and errors — each labelled by engine and tokenizer. It is off
# by default (one boolean test per call), and it uses its own registry, so it never
# mixes with an application's metrics. `exposition()` returns the text format that a
# Prometheus server scrapes from a `/metrics` endpoint.

# %%
from labkit import metrics
from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer  # notebook 10

metrics.enable()
tok = toks["qwen2", "hf"]
for line in ["Hello world", "A cup of tea?", "Botchan went to Shikoku."]:
    tok.decode(tok.encode(line).ids)
stream = labkit.DecodeStream(tok)
emoji_ids = tok.encode("tea 🍵 time").ids       # the emoji is two byte-level tokens
chunks = [stream.step(i) for i in emoji_ids]
stopper = labkit.StopSequenceDecoder(tok, labkit.StopSequenceConfig(stop_sequences=("Shikoku",)))
stopper.process_tokens(tok.encode("Botchan went to Shikoku.").ids)
cached = CachedTokenizer(tok, CacheConfig(enable_l0=True))
for _ in range(3):
    cached.encode("<|im_start|>user\nHello<|im_end|>\n")
metrics.enable(False)
print("chunks:", chunks)
print("stop:", stopper.stop_reason)

# %% [markdown]
# The exposition, filtered to the lines that count things (these are the same on every
# run; the timings follow in the next cell):

# %%
text = metrics.exposition()
counted = [l for l in text.splitlines()
           if not l.startswith("#") and "_created" not in l
           and ("_total{" in l or "_count{" in l or ("_sum{" in l and "duration" not in l))]
print("\n".join(counted))

# %%
def sample(name, **labels):
    return sum(float(l.rsplit(" ", 1)[1]) for l in counted
               if l.startswith(name + "{") and all(f'{k}="{v}"' in l for k, v in labels.items()))

assert sample("labkit_decode_duration_seconds_count") == 3
assert sample("labkit_stream_steps_total") >= len(emoji_ids)            # the stop decoder steps a stream too
assert sample("labkit_stream_incomplete_utf8_holds_total") >= 1         # the first half of the emoji
assert sample("labkit_stop_detections_total", kind="string") == 1
assert sample("labkit_cache_lookups_total", level="l0", result="miss") == 1
assert sample("labkit_cache_lookups_total", level="l0", result="hit") == 2

# %% tags=["nbval-ignore-output"]
print("\n".join(l for l in text.splitlines() if l.startswith("labkit_encode_duration_seconds")))


# %% [markdown]
# ## What the numbers mean for a serving system
#
# - **Tokenization is cheap next to the model, but not free.** A 12,000-character prompt
#   costs milliseconds on every engine here (section 1). In a router that handles
#   thousands of requests a second, that is CPU a server has to budget for, and it sits on
#   the latency path before the first token.
# - **Read the tail.** For prompts of one size, the p99 is the machine's noise; across
#   sizes, it is the long prompts. A router that mixes chat turns with documents should
#   watch latency per size, or per token.
# - **Threads need an engine that releases the GIL.** tiktoken and sentencepiece release
#   it per call; `tokenizers` in `encode_batch`. A pure-Python tokenizer serialises every
#   thread of the process: scale it with processes, not threads.
# - **The streaming side is per token.** DecodeStream and the stop jail cost a microsecond
#   or less per token and stay flat with output length and with the number of stop
#   strings; a hold-back with one `find` per stop string grows with their number.
# - **Measure in production, too.** The metrics above (durations, tokens per request,
#   holds, stops, cache hit rates) are what shows when one of these assumptions breaks.

# %% [markdown]
# ## Try it
#
# 1. Compute the p99 of `samples["labkit"]` yourself (sort, then interpolate) and check it
#    with `check_percentile(samples["labkit"], 99, your_answer)`.
# 2. Run `steps_beside(lambda: toks["qwen2", "labkit"].encode(TEXT[:60_000]))` a few times.
#    Does the counter ever move (`True` or `False`)? Which stage of labkit's encode lets it:
#    `"regex split"`, `"merge loop"` or `"id lookup"`? Check with `check_gil_stage`.
#
# Hints (read one at a time):
#
# 1. For exercise 1, the likely slip is taking the sample at index `int(0.99 * n)`: that is
#    a nearest-rank percentile. The table above (and numpy) interpolate between the two
#    samples around position `(n - 1) * 0.99`.
# 2. For exercise 2, clear the word cache first (`toks["qwen2", "labkit"].clear_cache()`)
#    or the merges never run; then the counter moves only a little. The merge loop is
#    Python bytecode: it holds the GIL for as long as it runs.
# 3. Which stage of labkit's encode runs in a C extension, on an immutable `str`? The
#    documentation of the `regex` module says what it does with the GIL while it matches one.

# %%
from labkit.exercises.perf import check_gil_stage, check_percentile

p99 = ...
check_percentile(samples["labkit"], 99, p99)

# %%
counter_moves, stage = ..., ...
check_gil_stage(counter_moves, stage)

# %% [markdown]
# ## Summary
#
# - Latency is read as a distribution; its tail is the machine's noise and the longest prompts.
# - The GIL decides thread scaling: a direct probe shows which calls let other threads run.
# - Batching pays only where the library works outside the GIL (`tokenizers`' `encode_batch`).
# - Streaming decode and the stop jail cost little per token and stay flat.
# - `labkit.metrics.enable()` records what an operator needs; `exposition()` is the text
#   Prometheus scrapes.
