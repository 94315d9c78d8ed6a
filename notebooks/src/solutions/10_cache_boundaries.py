# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 10 · Cache boundaries: worked answers to "Try it"
#
# The exercises of `10_cache_boundaries`, answered and checked with the notebook's checkers.

# %%
from labkit.bench.workloads import make_workload
from labkit.cache.cached_tokenizer import CacheConfig, CachedTokenizer
from labkit.exercises.cache import check_cut, check_cut_before_special, check_entry_size

qwen = labkit.load("qwen2", engine="hf")
text = "Hello world, how are you?"

def apart(cut):
    return qwen.encode(text[:cut]).ids + qwen.encode(text[cut:]).ids

# %% [markdown]
# **1.** Every cut, tried: a cut inside `Hello` (3) changes the ids; the two ends (0 and the
# length) cannot, and neither can a cut right after a word that ends the pre-tokenizer's piece.

# %%
keeps = [cut for cut in range(len(text) + 1) if apart(cut) == qwen.encode(text).ids]
print("cuts that keep the ids:", keeps)
cut_that_changes, cut_that_keeps = 3, 0
assert cut_that_changes not in keeps and cut_that_keeps in keeps
assert check_cut(text, cut_that_changes, changes=True)
assert check_cut(text, cut_that_keeps, changes=False)
assert not check_cut(text, cut_that_changes, changes=False)

# %% [markdown]
# **2.** The splitter cuts the raw text on both sides of `<|im_start|>` before BPE runs, so
# whatever `a` is, its ids end where the marker starts.

# %%
a, b = "You are helpful.", "<|im_start|>user\nhi"
assert check_cut_before_special(a, b)
assert check_cut_before_special("no space at the end", "<|im_start|>assistant")

# %% [markdown]
# **3.** Measured: one realistic-chat prompt through an L1-only cache, then bytes over entries.
# The text alone is far smaller than what the entry keeps per token.

# %% tags=["nbval-ignore-output"]
prompt = make_workload("realistic_chat", n_requests=1).prompts[0]
cached = CachedTokenizer(qwen, CacheConfig(enable_l1=True))
cached.encode(prompt)
l1 = cached.stats()["l1"]
answer_bytes = l1["bytes"] // l1["entries"]
print(f"{l1['entries']} entries, {l1['bytes']:,} bytes: {answer_bytes:,} bytes an entry; the prompt is {len(prompt):,} characters")
assert check_entry_size(prompt, answer_bytes)
assert not check_entry_size(prompt, len(prompt) // 4)
