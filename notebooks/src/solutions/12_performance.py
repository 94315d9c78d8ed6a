# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 12 · Performance: worked answers to "Try it"
#
# The exercise of `12_performance`, answered and checked with the notebook's checker.
# (The percentile and GIL exercises moved with their sections to `15_serving_metrics`.)

# %%
from labkit.algorithms import bpe
from labkit.exercises.perf import check_rank_calls

# %% [markdown]
# **1.** Wrap the ranker in a counter and run both loops.

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
