# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 12 · Performance: what the tokenizer layer costs a serving system
#
# Every request to a language model is tokenized before the model sees it, and every
# generated token is detokenized before the user sees it. This notebook measures that
# layer the way a router's benchmark does — throughput, the word cache, input size and
# memory — with labkit's pure-Python engines side by side with the reference libraries
# (`tokenizers` in Rust, `tiktoken` in Rust, `sentencepiece` in C++). Latency
# distributions, threads and the GIL, the output path (streaming, stop strings) and the
# Prometheus metrics labkit exports are the subject of notebook 15, serving metrics.
#
# **Learning goals**
# - read a benchmark as *ratios measured in the same run*, not as absolute numbers;
# - see why a word cache makes pure Python fast on repetitive text, and slow on text it has not seen;
# - know where the memory of a tokenizer goes, and why the engines do not cost the same.
#
# **How to read the numbers.** This notebook runs on a shared machine; absolute timings
# move from run to run, so every timing cell is excluded from the notebook's regression
# test, and the claims the text makes are checked as inequalities with a wide margin.
# The full benchmark suites are `python -m labkit.bench all` (or `labkit bench all`);
# this notebook calls the same functions with small inputs, so that it runs in seconds.


# %%
import gc
import sys
import time
import types

import matplotlib.pyplot as plt
import pandas as pd

from labkit.algorithms import bpe
from labkit.bench import serving
from labkit.bench.harness import best_ms, corpus, median_seconds

serving.import_engines()  # engine code imported once, so memory below counts tokenizers

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
# grows (section 4 comes back to it).
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
    "llama-spm": ("labkit", "sentencepiece"),  # engine="hf" refuses a llama or bert GGUF (notebook 00)
    "minilm": ("labkit", "hf"),  # BERT: bert-bge's vocabulary as a tokenizer.json
    "botchan-unigram": ("labkit", "sentencepiece"),  # engine="hf" refuses a .model (notebook 14)
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

from labkit.bench.probes import ids_only  # each library's own ids-only call

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
# - **labkit warm** is *faster* than both compiled engines on Llama-2's vocabulary, about
#   even with `tokenizers` on BERT's, and behind tiktoken on the byte-level ones and
#   sentencepiece on the Unigram one (the next cell prints warm labkit over the best
#   reference per vocabulary, and asserts the Llama-2 case). Why it can win: the sample is botchan, a repetitive text whose every word the
#   warm-up run has cached, so each word is one dict look-up after the regex split;
#   `tokenizers` is slow on one long string (it builds an `Encoding` with offsets,
#   normalisation alignments and word ids for every token, whatever the caller needs); and
#   sentencepiece's BPE has no word cache at all: it merges every word every time. tiktoken
#   has no word cache either, but its merge loop is compiled and works on bytes, which is
#   why it stays ahead. Caching is the biggest lever a slow tokenizer has, and it only pays
#   on words seen before: the section below shows a text where it does not.
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
for name in ENGINES:
    print(f"{name}: labkit warm runs at {rate(name, 'labkit warm') / best_reference[name]:.2f}x the best reference "
          f"on botchan (ids only; above 1 is faster)")
assert rate("llama-spm", "labkit warm") > best_reference["llama-spm"]  # measured several times faster
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
# WordPiece against tokenizers on minilm's tokenizer.json (the bert-bge GGUF is served as llama.cpp serves it)
suites = [("gpt2", [compare.TIKTOKEN]), ("llama-spm", [compare.SENTENCEPIECE]), ("minilm", [compare.TOKENIZERS])]
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
# ### First, cold, warm
#
# *Cold* empties the word cache only. A tokenizer also learns, as it goes, what each pair of
# ids makes (the memo of notebook 02 §5), and `clear_cache()` keeps that. On text without
# spaces, where one long word is merged pair by pair, the very *first* encode of a freshly
# loaded tokenizer pays to learn it. `python -m labkit.bench long` reports all three rows;
# here 50 KB of random letters, gpt2 against tiktoken's own call:

# %% tags=["nbval-ignore-output"]
from labkit.bench.texts import long_texts

letters = long_texts(0.05, names=("letters",))["letters"]
long_rows = compare.measure("gpt2", "letters", letters, [compare.TIKTOKEN], repeat=3, first=True)
long_table = pd.DataFrame(long_rows).set_index("engine")
long_table.loc[["labkit first encode", "labkit cold encode", "labkit warm encode", "tiktoken direct encode"],
               ["MB/s", "vs direct"]].round(3)

# %%
assert all(row["exact"] for row in long_rows if "exact" in row)
assert [row["engine"] for row in long_rows][:3] == ["labkit first encode", "labkit cold encode", "labkit warm encode"]


# %% [markdown]
# ## 3. Cost versus input size
#
# Every engine's cost grows linearly with the text: the pre-tokenizer cuts it into words,
# and each word is merged on its own. (The merge loop itself is where an implementation can
# go quadratic; notebook 02 §5 measures the textbook loop against the heap.) Here Qwen2's
# engines encode a growing prefix of botchan. Each point is the best of three runs, so the
# labkit line is **warm**: its first run filled the word cache. The **labkit cold** line
# empties the cache before every run.

# %% tags=["nbval-ignore-output"]
qwen = {engine: toks["qwen2", engine] for engine in ENGINES["qwen2"]}
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
# ## 4. Memory per tokenizer, and why
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
# 1). The engines do not cost the same: the cell after the table prints, per vocabulary,
# the engine that grew the process most and least, and asserts the spread on Llama-2's
# SentencePiece model, where `sentencepiece` is loaded last. Read the figures with
# care, though: they are one process's growth, and the allocator hands out again memory
# freed by earlier loads (the hf engine builds and frees large temporaries while it converts
# a `.model`), so a small growth can be reused memory as much as a small tokenizer. The
# split that follows, by Python objects, does not depend on the order of the loads.

# %% tags=["nbval-ignore-output"]
memory = pd.DataFrame(load_rows).pivot(index="vocab", columns="engine", values="rss_growth_mb").reindex(list(ENGINES))
memory.round(1)

# %% tags=["nbval-ignore-output"]
spread = {}
for name, row in memory.iterrows():
    grown = row.dropna()
    spread[name] = grown.max() / max(grown.min(), 0.1)
    print(f"{name:16} most {grown.idxmax()} {grown.max():6.1f} MB, least {grown.idxmin()} {grown.min():6.1f} MB "
          f"({spread[name]:.1f}x)")
assert spread["llama-spm"] > 1.5  # not "about the same": labkit's Python dicts against sentencepiece's arrays

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
# The part that differs by engine and does not depend on the allocator is the engine's own
# Python tables: labkit's dicts (bytes to id, pair to rank, the word cache) are of the same
# order as the `VocabData` itself; the tiktoken engine keeps a smaller Python table beside
# its Rust map; `tokenizers` keeps everything in Rust.

# %% tags=["nbval-ignore-output"]
tables = gpt2_memory["engine tables (Python) MB"]
print("GPT-2, engine tables as Python objects:", ", ".join(f"{e} {mb:.1f} MB" for e, mb in tables.items()))
assert tables["labkit"] > 1.5 * tables["tiktoken"] and tables["labkit"] > 1.5 * tables["hf"]
assert tables["labkit"] > 0.5 * gpt2_memory.loc["labkit", "VocabData (Python) MB"]


# %% [markdown]
# ## What the numbers mean for a serving system
#
# - **Tokenization is cheap next to the model, but not free.** Encoding 12,000 characters
#   costs milliseconds on every engine here (section 2). In a router that handles thousands
#   of requests a second, that is CPU a server has to budget for, and it sits on the
#   latency path before the first token.
# - **Cache words, and measure cold.** labkit's word cache is worth up to an order of
#   magnitude on repeated text; a benchmark that only measures warm runs flatters a slow
#   engine, and on text it has not seen (the mixed-script text) it is several times slower.
# - **Ask for what you need.** Building a Python `Encoding` (token strings, offsets) can
#   cost more than computing the ids. Count tokens and feed the model with ids only.
# - **Beware quadratic corners.** A textbook merge loop is fine on words and ruinous on a
#   64 KB run without spaces (notebook 02 §5 measures it). Test the worst input a user can
#   send, not the average one.
# - **Memory is the vocabulary's representation, and it differs by engine.** Token strings
#   and merges as Python objects take many times the size of their text (section 4), and
#   labkit's own engine adds Python tables of the same order on top; a compiled engine keeps
#   its tables in native memory. Per worker process, it adds up: load once, then fork or share.
# - **Freeze what lives forever.** `gc.freeze()` after loading keeps the collector from
#   walking the vocabulary's containers on every full pass (section 1 measures it).
#
# Latency tails, threads, batching, the output path and the metrics to export are in
# notebook 15.

# %% [markdown]
# ## Try it
#
# 1. Count how many times each BPE calls its rank function on a word: wrap a ranker so it
#    counts, run `bpe.bpe_naive` and `bpe.bpe_heap` on `b"abababab"` with the ranks below,
#    and check both counts with `check_rank_calls`.
#
# Hints (read one at a time):
#
# 1. The naive loop ranks every adjacent pair at every step, *including the last step*,
#    which finds nothing to merge (or stops because one part is left): count that scan too.
# 2. The heap ranks each starting pair once; after a merge it ranks only the new pairs the
#    merged part makes with its left and right neighbours.

# %%
from labkit.exercises.perf import check_rank_calls

ranks = {(b"a", b"b"): 0, (b"ab", b"ab"): 1, (b"abab", b"abab"): 2}
naive_calls, heap_calls = ..., ...
check_rank_calls(b"abababab", ranks, naive_calls=naive_calls, heap_calls=heap_calls)

# %% [markdown]
# ## Summary
#
# - Benchmarks on a shared machine are read as ratios from one run; the suites print
#   labkit next to `tokenizers`, `tiktoken` and `sentencepiece`, and `labkit bench all`
#   runs every one of them (`labkit bench all --quick` with small inputs).
# - Every engine is linear in the text; labkit's word cache makes it fast on repetitive text
#   (warm), and on text it has not seen (cold, the mixed-script text) it is several times
#   slower than the libraries' own calls.
# - A tokenizer's memory is its vocabulary's representation; as Python objects (the
#   `VocabData` every labkit Tokenizer keeps) it costs many times the token text, and labkit's
#   own engine adds its Python tables on top.
