# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 12 · Performance and metrics: what the tokenizer layer costs a serving system
#
# Every request to a language model is tokenized before the model sees it, and every
# generated token is detokenized before the user sees it. This notebook measures that
# layer the way a router's benchmark does — throughput, latency distributions, threads,
# input size, memory, streaming and stop sequences — with labkit's pure-Python engines
# side by side with the reference libraries (`tokenizers` in Rust, `tiktoken` in Rust,
# `sentencepiece` in C++), and then shows the Prometheus metrics labkit can export.
#
# **Learning goals**
# - read a benchmark as *ratios measured in the same run*, not as absolute numbers;
# - see what the GIL means for a tokenizer: which engines let other threads run;
# - see why a word cache makes pure Python fast on repetitive text, and slow on text it has not seen;
# - know where the memory of a tokenizer goes, and what streaming and stop strings cost;
# - turn on `labkit.metrics` and read the exposition text a Prometheus server scrapes.
#
# **How to read the numbers.** This notebook runs on a shared machine; absolute timings
# move from run to run, so every timing cell is excluded from the notebook's regression
# test, and the claims the text makes are checked as inequalities with a wide margin.
# The full benchmark suites are `python -m labkit.bench all` (or `labkit bench all`);
# this notebook calls the same functions with small inputs, so that it runs in seconds.

# %%
import gc
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
from labkit.bench.harness import corpus, median_seconds

serving.import_engines()  # engine code imported once, so memory below counts tokenizers


def best_ms(fn, repeat):
    """The fastest of ``repeat`` runs of ``fn()``, in milliseconds (least disturbed by the machine)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times) * 1e3

TEXT = corpus(0.3)        # botchan.txt, repeated: English prose
pd.set_option("display.precision", 3)

# %% [markdown]
# ## 1. Six vocabularies, four engines
#
# Each bundled vocabulary is loaded with every engine that can serve it: `labkit` (the
# book's pure-Python algorithms), `hf` (a `tokenizers.Tokenizer` built from the same
# file), `tiktoken` (byte-level BPE only) and `sentencepiece` (SentencePiece models only).
# `tokenizers` could serve `cl100k_base` too, but building it from the rank file takes
# seconds, so it is left out here. While loading, we note how much this process's resident memory
# grows (section 6 comes back to it).
#
# One serving trick is already in the loading loop: `gc.freeze()`. A loaded vocabulary is
# held in Python containers (lists and dicts of hundreds of thousands of entries) that live
# as long as the process; without the freeze, every full pass of the garbage collector
# walks through all of them again, which shows up as latency spikes. Frozen objects are
# skipped; the cell after the loading measures the difference.

# %%
ENGINES = {
    "gpt2": ("labkit", "hf", "tiktoken"),
    "qwen2": ("labkit", "hf", "tiktoken"),
    "cl100k_base": ("labkit", "tiktoken"),
    "llama-spm": ("labkit", "hf", "sentencepiece"),
    "bert-bge": ("labkit", "hf"),
    "botchan-unigram": ("labkit", "hf", "sentencepiece"),
}
toks, load_rows = {}, []
for name, engines in ENGINES.items():
    for engine in engines:
        gc.collect()
        before, started = serving.rss_bytes(), time.perf_counter()
        toks[name, engine] = labkit.load(name, engine=engine)
        seconds = time.perf_counter() - started
        gc.collect()
        load_rows.append({"vocab": name, "engine": engine, "load_s": seconds,
                          "rss_growth_mb": (serving.rss_bytes() - before) / 2**20})
        gc.freeze()  # the vocabularies live as long as the process: keep them out of gc passes
pd.DataFrame([{"vocab": n, "engines": ", ".join(e), "model": toks[n, "labkit"].vocab.model,
               "vocab size": toks[n, "labkit"].vocab_size} for n, e in ENGINES.items()])

# %% tags=["nbval-ignore-output"]
frozen = gc.get_freeze_count()
gc.unfreeze()  # for one measurement: a full pass over every object, as without the freeze
full_pass_ms = best_ms(gc.collect, 1)
gc.freeze()
frozen_pass_ms = best_ms(gc.collect, 3)
print(f"{frozen:,} objects frozen; a full gc pass takes {full_pass_ms:.0f} ms over all of them, "
      f"{frozen_pass_ms:.1f} ms once they are frozen")
assert full_pass_ms > 5 * frozen_pass_ms

# %% [markdown]
# Before timing anything: every engine must give the same ids, or a comparison means
# nothing. The throughput text is 12,000 characters of botchan.

# %%
SAMPLE = TEXT[:12_000]

def ids_only(tok):
    """The fastest way each library gives ids for plain text (no Encoding, no offsets)."""
    if tok.engine == "labkit":
        return tok.encode_ordinary
    if tok.engine == "hf":
        return lambda text: tok.backend.encode(text, add_special_tokens=False).ids
    if tok.engine == "tiktoken":
        return tok.backend.encode_ordinary
    return tok.backend.encode  # sentencepiece: ids, no BOS

agreement = []
for (name, engine), tok in toks.items():
    reference = toks[name, "labkit"].encode(SAMPLE).ids
    agreement.append({"vocab": name, "engine": engine, "tokens": len(reference),
                      "Encoding ids agree": tok.encode(SAMPLE).ids == reference,
                      "raw ids agree": list(ids_only(tok)(SAMPLE)) == reference})
agreement = pd.DataFrame(agreement)
assert agreement["Encoding ids agree"].all() and agreement["raw ids agree"].all()
agreement

# %% [markdown]
# ## 2. Throughput by engine and vocabulary
#
# Two ways of calling each engine, both timed on the same text in the same run (median
# of 3, after one untimed warm-up run):
#
# - **Encoding**: `tok.encode(text)` through labkit's surface — ids, token strings and
#   character offsets, the same object whichever engine serves it;
# - **ids only**: the library's own fastest call (`encode_ordinary` for labkit and
#   tiktoken, `Tokenizer.encode(...).ids` for tokenizers, `encode` for sentencepiece).
#
# labkit is timed twice. Its engines remember the ids of each word they have merged (a
# word cache), and the warm-up run fills it: **labkit warm** then only looks words up.
# **labkit cold** empties the cache before every run, so every word is merged in Python.
# Real traffic sits in between (common words hit, rare ones miss).

# %%
def cleared(tok):
    """A function that empties a labkit engine's word cache (cold runs)."""
    if hasattr(tok, "clear_cache"):
        return tok.clear_cache
    cache = getattr(tok, "word_cache", None)  # the unigram engine keeps a plain dict
    return cache.clear if cache is not None else (lambda: None)

variants = []  # (vocab, label, tokenizer, run before each timed call)
for (name, engine), tok in toks.items():
    if engine == "labkit":
        variants.append((name, "labkit cold", tok, cleared(tok)))
        variants.append((name, "labkit warm", tok, lambda: None))
    else:
        variants.append((name, engine, tok, lambda: None))
print(len(variants), "variants:", sorted({label for _, label, _, _ in variants}))

# %% tags=["nbval-ignore-output"]
megabytes = len(SAMPLE.encode("utf-8")) / 1e6
rows = []
for name, label, tok, before in variants:
    raw = ids_only(tok)
    full = median_seconds(lambda: (before(), tok.encode(SAMPLE)), repeat=3, warmup=1)
    fast = median_seconds(lambda: (before(), raw(SAMPLE)), repeat=3, warmup=1)
    rows.append({"vocab": name, "engine": label, "Encoding MB/s": megabytes / full,
                 "ids only MB/s": megabytes / fast})
throughput = pd.DataFrame(rows)
best_reference = throughput[~throughput.engine.str.startswith("labkit")].groupby("vocab")["ids only MB/s"].max()
throughput["ids only / best reference"] = throughput["ids only MB/s"] / throughput.vocab.map(best_reference)
throughput

# %% tags=["nbval-ignore-output"]
colors = {"labkit cold": "#8fa9d6", "labkit warm": "#4c72b0", "labkit": "#4c72b0", "hf": "#dd8452",
          "tiktoken": "#55a868", "sentencepiece": "#c44e52"}
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharey=True)
for ax, column in zip(axes, ["Encoding MB/s", "ids only MB/s"]):
    table = throughput.pivot(index="vocab", columns="engine", values=column).reindex(list(ENGINES))
    table = table[[e for e in colors if e in table]]
    table.plot.bar(ax=ax, color=[colors[e] for e in table], rot=20, logy=True, width=0.8, legend=False)
    ax.set_title(column.replace(" MB/s", "") + " (MB/s, log scale)")
    ax.set_xlabel("")
fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncol=5, frameon=False)
plt.tight_layout(rect=(0, 0, 1, 0.9)); plt.show()

# %% [markdown]
# What to look for:
#
# - **labkit cold against the references (ids only)**: this is the real cost of merging in
#   Python, and tiktoken or sentencepiece are many times faster on most vocabularies.
# - **labkit warm** can come out *faster* than a compiled engine here, for three reasons:
#   the sample is botchan, a repetitive text whose every word the warm-up run has cached,
#   so each word is one dict look-up after the regex split; `tokenizers` is slow on one long
#   string (it builds an `Encoding` with offsets, normalisation alignments and word ids for
#   every token, whatever the caller needs); and sentencepiece's BPE has no word cache at
#   all: it merges every word every time (so has tiktoken). Caching is the biggest lever a
#   slow tokenizer has, and it only pays on words seen before: the next cell shows a text
#   where it does not.
# - **Encoding against ids only**: an `Encoding` computes its token strings and offsets
#   only when they are first read, so an encode whose caller reads only `.ids` does no
#   per-token Python work beyond the library's call. What is left between the two columns
#   is the library path: through labkit's surface tiktoken runs `encode` with the special
#   tokens allowed (it scans for them), the ids-only column runs `encode_ordinary`.

# %% tags=["nbval-ignore-output"]
def rate(name, engine, column="ids only MB/s"):
    return float(throughput[(throughput.vocab == name) & (throughput.engine == engine)][column].iloc[0])

for name in ("gpt2", "qwen2", "botchan-unigram"):
    print(f"{name}: best reference {best_reference[name] / rate(name, 'labkit cold'):.1f}x labkit cold, "
          f"labkit warm {rate(name, 'labkit warm') / rate(name, 'labkit cold'):.1f}x labkit cold (ids only)")
assert all(best_reference[name] > 4 * rate(name, "labkit cold") for name in ("gpt2", "qwen2", "botchan-unigram"))
assert all(rate(name, "labkit warm") > 3 * rate(name, "labkit cold") for name in ("gpt2", "qwen2"))
wrapping = {name: rate(name, "tiktoken") / rate(name, "tiktoken", "Encoding MB/s") for name in ("gpt2", "qwen2", "cl100k_base")}
print("tiktoken, ids only / Encoding:", {name: round(v, 1) for name, v in wrapping.items()})

# %%
# nothing per token until read: offsets are a function until .offsets is first asked for
lazy = toks["cl100k_base", "tiktoken"].encode(SAMPLE)
assert callable(lazy._offsets) and callable(lazy._tokens)
assert lazy.offsets[:2] == [(0, 1), (1, 8)] and not callable(lazy._offsets)
print("offsets computed on first read:", lazy.offsets[:3])

# %% [markdown]
# ### On a text the cache has not seen
#
# `labkit bench` measures on three texts: botchan, a non-repetitive mixed-script text
# (Qwen2 vocabulary pieces of every script in random order) and a Chinese one, and times
# every engine in CPU time, in interleaved rounds (median), against labkit's wrapper of the
# reference *and* against the library called directly. A small run here (20 KB of each):
# **vs direct** above 1 means labkit is faster than the library's own call.

# %% tags=["nbval-ignore-output"]
from labkit.bench import compare
from labkit.bench.texts import chinese_text, mixed_text

small_texts = {"botchan": TEXT[:20_000], "mixed": mixed_text(0.02), "chinese": chinese_text(0.02)}
suites = [("gpt2", [compare.TIKTOKEN]), ("llama-spm", [compare.SENTENCEPIECE]), ("bert-bge", [compare.TOKENIZERS])]
direct_rows = [row for name, refs in suites for text_name, text in small_texts.items()
               for row in compare.measure(name, text_name, text, refs, repeat=3)]
direct = pd.DataFrame(direct_rows)
direct = direct[direct.engine.isin(["labkit cold encode", "labkit warm encode", "labkit decode"])]
direct.pivot_table(index=["vocab", "engine"], columns="text", values="vs direct").round(2)

# %% tags=["nbval-ignore-output"]
def vs_direct(name, text, engine="labkit cold encode"):
    return float(direct[(direct.vocab == name) & (direct.text == text) & (direct.engine == engine)]["vs direct"].iloc[0])

print(f"gpt2, mixed text: labkit cold runs at {vs_direct('gpt2', 'mixed'):.2f}x tiktoken's own call")
assert all(row["exact"] for row in direct_rows if "exact" in row)
assert vs_direct("gpt2", "mixed") < 1 / 3  # pure Python merging every new word: several times slower

# %% [markdown]
# On the mixed text almost every word is new, so cold is what a server sees, and labkit is
# several times slower than tiktoken; warm on the same text only repeats the run the cache
# was filled by. `python -m labkit.bench bpe` (and `spm`, `wordpiece`) print the full
# tables; the README quotes the direct ratios.

# %% [markdown]
# Two more of the router benchmark's groups, run with the serving suite's own functions on
# the Qwen2 tokenizers loaded above (`labkit bench serving` runs them at full size):
# **batch vs single** — 16 prompts of 1,500 characters encoded one by one, then with one
# `encode_batch` call — and **decode** throughput over about 50 KB of ids. The raw
# `tokenizers.Tokenizer` is added as a fourth row for the batch group.

# %% tags=["nbval-ignore-output"]
qwen = {engine: toks["qwen2", engine] for engine in ENGINES["qwen2"]}
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
# in Rust, without the GIL (section 4 checks that): that is where batching can pay, on a
# machine with idle cores. Its answer is still exactly the loop's, `Encoding` for
# `Encoding`. Decoding is a join of token bytes and one UTF-8 decode: cheap for every engine.

# %%
batch_prompts = [TEXT[i * 1_000 :][:500] + "<|im_end|>" for i in range(8)]
for parse_special in (True, False):
    assert qwen["hf"].encode_batch(batch_prompts, parse_special=parse_special) == [
        qwen["hf"].encode(p, parse_special=parse_special) for p in batch_prompts]
print("hf encode_batch == loop over encode, for", len(batch_prompts), "prompts, parse_special True and False")

# %% [markdown]
# ## 3. Latency distributions
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
# ## 4. Threads and the GIL
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
def steps_beside(fn):
    """Python loop steps another thread makes while ``fn()`` runs (forced switches rare)."""
    state = {"count": 0, "stop": False}

    def counter():
        n = 0
        while not state["stop"]:
            n += 1
            if n % 200 == 0:
                state["count"] = n
                time.sleep(0)  # let go of the GIL now and then, so the caller can get it back

    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    thread = threading.Thread(target=counter)
    try:
        thread.start()
        before = state["count"]
        fn()
        moved = state["count"] - before
    finally:
        state["stop"] = True
        sys.setswitchinterval(old)
        thread.join()
    return moved

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
releases = {label: max(steps_beside(fn) for _ in range(2)) > 0 for label, fn in probes.items()}
pd.Series(releases, name="other threads run during the call")

# %%
assert not releases["labkit: bpe_heap (pure Python)"]
assert releases["tiktoken: encode_ordinary"] and releases["sentencepiece: encode"]
assert releases["tokenizers: encode_batch"] and not releases["tokenizers: encode (one text)"]

# %% [markdown]
# So (with the library versions installed here): tiktoken and sentencepiece release the
# GIL for an encode; `tokenizers` releases it in `encode_batch` (where it also uses its own
# thread pool) but holds it for a single `encode`; and labkit's Python merges never
# release it. (labkit's full `encode` does release it for a moment: its regex split runs in
# the `regex` module, which lets go of the GIL while it matches a `str`.)
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
# ## 5. Cost versus input size
#
# Every engine's cost grows linearly with the text: the pre-tokenizer cuts it into words,
# and each word is merged on its own. (The merge loop itself is where an implementation can
# go quadratic; notebook 02 §5 measures the textbook loop against the heap.) Here Qwen2's
# engines encode a growing prefix of botchan. Each point is the best of three runs, so the
# labkit line is **warm**: its first run filled the word cache. The **labkit cold** line
# empties the cache before every run.

# %% tags=["nbval-ignore-output"]
SCALING_SIZES = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000)
scaling = pd.DataFrame({engine + "_ms": {n: best_ms(lambda: tok.encode(TEXT[:n]), 3) for n in SCALING_SIZES}
                        for engine, tok in qwen.items()})
qwen_labkit = qwen["labkit"]
scaling["labkit cold_ms"] = {n: best_ms(lambda: (qwen_labkit.clear_cache(), qwen_labkit.encode(TEXT[:n])), 3)
                             for n in SCALING_SIZES}
labels = {"labkit": "labkit (warm)", "labkit cold": "labkit (cold)"}
fig, ax = plt.subplots(figsize=(6.5, 4))
for engine in [*qwen, "labkit cold"]:
    ax.plot(scaling.index, scaling[engine + "_ms"], marker="o", label=labels.get(engine, engine),
            color=colors.get(engine, "#8fa9d6"))
ax.plot(SCALING_SIZES, [scaling["labkit cold_ms"].iloc[0] * n / SCALING_SIZES[0] for n in SCALING_SIZES], "k--",
        lw=0.8, label="slope 1 (n)")
ax.set_title("Qwen2 encode: ms per call vs characters"); ax.set_xlabel("characters")
ax.set_xscale("log"); ax.set_yscale("log"); ax.set_ylabel("ms (log)"); ax.legend(); ax.grid(alpha=0.3)
plt.tight_layout(); plt.show()
scaling.round(2)

# %% [markdown]
# ## 6. Memory per tokenizer, and why
#
# What a loaded tokenizer keeps is its vocabulary in some in-memory form. The plain data
# is the same for every engine — the reader's `VocabData`: token strings, merges
# (byte-level BPE) or scores (SentencePiece), specials, metadata — and each engine then
# builds its own tables from it:
#
# - **labkit** builds Python dicts: token bytes to id, merge pair to rank (a tuple of two
#   `bytes` per key), a word cache that grows with use;
# - **tiktoken** builds a Rust hash map from token bytes to rank, and its reverse;
# - **tokenizers** builds its vocab map (string to id) and reverse, the merges as a map of
#   id pairs, and a word cache;
# - **sentencepiece** parses the model protobuf and builds a double-array trie.
#
# First the sizes of the plain data, counted from `VocabData`:

# %%
def vocab_facts(name):
    vocab = toks[name, "labkit"].vocab
    return {"vocab": name, "model": vocab.model, "tokens": len(vocab.tokens),
            "merges": len(vocab.merges or ()), "scores": len(vocab.scores or ()),
            "token text (KB)": round(sum(len(t.encode("utf-8")) for t in vocab.tokens) / 1024)}

facts = pd.DataFrame([vocab_facts(name) for name in ENGINES]).set_index("vocab")
assert facts.loc["qwen2", "tokens"] > 150_000 and facts.loc["botchan-unigram", "tokens"] == 1000
facts

# %% [markdown]
# Then how much this process's resident memory grew while each tokenizer loaded (section
# 1). This is approximate: the allocator reuses memory freed by earlier loads, so one load
# can show a different growth from one run to the next. Read it per vocabulary, not as "the
# engines cost about the same": the cell after the table prints which engine grew the
# process most and which least, and on the SentencePiece vocabularies sentencepiece's C++
# model is usually a small fraction of the others. The section below splits GPT-2's memory
# into its parts.

# %% tags=["nbval-ignore-output"]
memory = pd.DataFrame(load_rows).pivot(index="vocab", columns="engine", values="rss_growth_mb").reindex(list(ENGINES))
memory.round(1)

# %% tags=["nbval-ignore-output"]
for name, row in memory.iterrows():
    grown = row.dropna()
    print(f"{name:16} most {grown.idxmax()} {grown.max():6.1f} MB, least {grown.idxmin()} {grown.min():6.1f} MB")

# %% [markdown]
# Where does it go? Every labkit `Tokenizer`, whichever engine serves it, keeps its `VocabData`
# (`tok.vocab`): that is what answers `vocab_size`, `id_to_token`, `special_tokens` and the
# chat template the same way for every engine. As Python objects — a `str` per token with
# about 50 bytes of header, a tuple and two strings per merge — it is far larger than the
# text it holds. Walking the objects of the GPT-2 tokenizers (`sys.getsizeof` of everything
# reachable, each object once) splits the memory into the shared `VocabData`, the Python
# tables of the engine, and the rest (the resident growth minus the Python objects: the
# Rust or C++ tables, plus the allocator's slack, which is why labkit has a rest too).

# %% tags=["nbval-ignore-output"]
def deep_size(*roots, exclude=()):
    """Total ``sys.getsizeof`` of the objects reachable from ``roots``, each counted once,
    not entering ``exclude`` (nor classes, modules and functions)."""
    seen = {id(x) for x in exclude}
    stack, total = list(roots), 0
    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total

MB = 2**20
gpt2_memory = []
for engine in ENGINES["gpt2"]:
    tok = toks["gpt2", engine]
    vocab_mb = deep_size(tok.vocab) / MB
    engine_mb = deep_size(tok, exclude=[tok.vocab]) / MB
    rss_mb = next(r["rss_growth_mb"] for r in load_rows if r["vocab"] == "gpt2" and r["engine"] == engine)
    gpt2_memory.append({"engine": engine, "resident growth MB": rss_mb, "VocabData (Python) MB": vocab_mb,
                        "engine tables (Python) MB": engine_mb,
                        "rest: native code + allocator MB": max(0.0, rss_mb - vocab_mb - engine_mb)})
gpt2_memory = pd.DataFrame(gpt2_memory).set_index("engine")
text_mb = facts.loc["gpt2", "token text (KB)"] / 1024
print(f"GPT-2's token text is {text_mb:.2f} MB; its VocabData takes "
      f"{gpt2_memory['VocabData (Python) MB'].iloc[0] / text_mb:.0f}x that as Python objects")
assert (gpt2_memory["VocabData (Python) MB"] > 5 * text_mb).all()
gpt2_memory.round(1)

# %% [markdown]
# ## 7. Streaming decode and stop sequences
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
# ## 8. Metrics: what a serving system exports
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
from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer

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
#   costs milliseconds on every engine here (section 3). In a router that handles
#   thousands of requests a second, that is CPU a server has to budget for, and it sits on
#   the latency path before the first token.
# - **Cache words, and measure cold.** labkit's word cache is worth up to an order of
#   magnitude on repeated text; a benchmark that only measures warm runs flatters a slow engine.
# - **Ask for what you need.** Building a Python `Encoding` (token strings, offsets) can
#   cost more than computing the ids. Count tokens and feed the model with ids only.
# - **Threads need an engine that releases the GIL.** tiktoken and sentencepiece release
#   it per call; `tokenizers` in `encode_batch`. A pure-Python tokenizer serialises every
#   thread of the process: scale it with processes, not threads.
# - **Beware quadratic corners.** A textbook merge loop is fine on words and ruinous on a
#   64 KB run without spaces (section 5 extrapolates it). Test the worst input a user can
#   send, not the average one.
# - **Memory is the vocabulary's representation.** Token strings and merges as Python
#   objects take many times the size of their text (tens of MB for a 150k vocabulary).
#   labkit keeps that `VocabData` beside every engine, which is why every engine costs
#   about the same here; a server that needs only ids can keep only the compiled engine's
#   tables. Per worker process, it adds up: load once, then fork or share.
# - **Freeze what lives forever.** `gc.freeze()` after loading keeps the collector from
#   walking the vocabulary's containers on every full pass (section 1 measures it).
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
# 2. Count how many times each BPE calls its rank function on a word: wrap a ranker so it
#    counts, run `bpe.bpe_naive` and `bpe.bpe_heap` on `b"abababab"` with the ranks below,
#    and check both counts with `check_rank_calls`.
# 3. Run `steps_beside` on `toks["qwen2", "labkit"].encode(TEXT[:60_000])` a few times.
#    Does the counter ever move? Which part of labkit's encode lets it?

# %%
from labkit.exercises.perf import check_percentile, check_rank_calls

p99 = ...
check_percentile(samples["labkit"], 99, p99)

# %%
ranks = {(b"a", b"b"): 0, (b"ab", b"ab"): 1, (b"abab", b"abab"): 2}
naive_calls, heap_calls = ..., ...
check_rank_calls(b"abababab", ranks, naive_calls=naive_calls, heap_calls=heap_calls)

# %% [markdown]
# ## Summary
#
# - Benchmarks on a shared machine are read as ratios from one run; the suites print
#   labkit next to `tokenizers`, `tiktoken` and `sentencepiece`, and `labkit bench all`
#   runs every one of them (`labkit bench all --quick` with small inputs).
# - The GIL decides thread scaling: a direct probe shows which calls let other threads run.
# - Every engine is linear in the text; labkit's word cache makes it fast on repetitive text
#   (warm), and on text it has not seen (cold, the mixed-script text) it is several times
#   slower than the libraries' own calls.
# - A tokenizer's memory is its vocabulary's representation; as Python objects (the
#   `VocabData` every labkit Tokenizer keeps) it costs many times the token text.
# - `labkit.metrics.enable()` records what an operator needs; `exposition()` is the text
#   Prometheus scrapes.
