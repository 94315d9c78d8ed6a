# %% [markdown]
# # 12 · Performance and metrics: worked answers to "Try it"
#
# The exercises of `12_performance_and_metrics`, answered and checked with the notebook's
# checkers. The notebook's latency samples are timings; here the same method runs on a fixed
# list, so the answer can be stored.

# %%
from labkit.algorithms import bpe
from labkit.exercises.perf import check_percentile, check_rank_calls

# %% [markdown]
# **1.** Sort, then interpolate at position (n - 1) · q / 100 (numpy's default).

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

# %% [markdown]
# **2.** Wrap the ranker in a counter and run both loops.

# %%
ranks = {(b"a", b"b"): 0, (b"ab", b"ab"): 1, (b"abab", b"abab"): 2}
calls = {"naive": 0, "heap": 0}

def counting(kind):
    lookup = bpe.pair_ranker(ranks)
    def rank(a, b):
        calls[kind] += 1
        return lookup(a, b)
    return rank

parts = bpe.byte_parts(b"abababab")
assert bpe.bpe_naive(parts, counting("naive")) == bpe.bpe_heap(parts, counting("heap")) == [b"abababab"]
print(calls)
assert check_rank_calls(b"abababab", ranks, naive_calls=calls["naive"], heap_calls=calls["heap"])
