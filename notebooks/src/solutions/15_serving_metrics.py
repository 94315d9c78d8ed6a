# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 15 · Serving metrics: worked answers to "Try it"
#
# The exercises of `15_serving_metrics`, answered and checked with the notebook's checkers.
# The notebook's latency samples are timings; here the same method runs on a fixed list, so
# the answer can be stored.

# %%
import sys
import threading
import time

from labkit.exercises.perf import check_gil_stage, check_percentile

# %% [markdown]
# **1.** Sort, then interpolate at position (n - 1) · q / 100 (numpy's default). Taking the
# sample at `int(0.99 * n)` instead (nearest rank) gives a different answer, and the checker
# says wrong.

# %%
def p_interpolated(samples, q):
    ordered = sorted(samples)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

samples = [0.8, 1.1, 0.9, 5.0, 1.0, 1.2, 0.95, 1.05, 0.85, 1.15]
answer_1 = p_interpolated(samples, 99)
print(f"p99 = {answer_1:.4f}")
assert check_percentile(samples, 99, answer_1)
assert not check_percentile(samples, 99, sorted(samples)[int(0.99 * len(samples))])

# %% [markdown]
# **2.** The notebook's probe, on labkit's encode with an empty word cache, and on each of its
# stages alone: the regex split (the `regex` module, on a `str`) and the merge loop.

# %%
from labkit.bench.probes import lets_others_run  # the notebook's probe

from labkit.algorithms import bpe
from labkit.bench.harness import corpus

qwen = labkit.load("qwen2", engine="labkit")
TEXT = corpus(0.3)

def cold_encode():
    qwen.clear_cache()  # with a warm cache the merges never run
    qwen.encode(TEXT[:60_000])

long_word = bpe.byte_parts(("abcdefgh" * 600).encode())
moved = {  # up to 16 runs each: a busy machine may give the counter no CPU in one short release
    "encode (cold)": lets_others_run(cold_encode),
    "regex split alone": lets_others_run(lambda: list(qwen.pre.split_normalized(TEXT[:60_000]))),
    "merge loop alone": lets_others_run(lambda: bpe.bpe_heap(long_word, qwen.rank)),
}
print("the counter moved:", moved)
assert moved["encode (cold)"] and moved["regex split alone"] and not moved["merge loop alone"]
assert check_gil_stage(True, "regex split")
