# %% [markdown]
# # 02 · Byte-level BPE: worked answers to "Try it"
#
# The exercises of `02_bpe_byte_level`, answered and checked. Each answer is computed or
# reasoned below, then handed to the same checker the notebook uses.

# %%
from labkit.algorithms.pretokenize import pretokenize
from labkit.exercises.bpe import check_pretokens, check_bpe, check_first_merges

# %% [markdown]
# **1.** Llama-3's regex takes `'s` as a contraction, a letter run, then digits in groups of
# at most three; the space before the digits is left alone because the digit pattern does
# not take a leading space.

# %%
answer_1 = ["It", "'s", " ", "202", "5", "!"]
assert check_pretokens("It's 2025!", "llama3", answer_1)
assert answer_1 == pretokenize("It's 2025!", "llama3")

# %% [markdown]
# **2.** `a b c b c`: the lowest rank present is `(a, b)`: `ab c b c`. Now `(ab, c)` has rank 2
# and `(b, c)` rank 1: `ab c bc`. Last `(ab, c)`: `abc bc`.

# %%
answer_2 = [b"abc", b"bc"]
assert check_bpe(b"abcbc", {(b"a", b"b"): 0, (b"b", b"c"): 1, (b"ab", b"c"): 2}, answer_2)

# %% [markdown]
# **3.** Pre-tokens `hug`, ` hug`, ` hug`, ` pug`, ` pun`. The pair `u g` occurs four times
# (every `hug` and `pug`), more than any other: it merges first. Then `h ug` occurs three
# times, ` h` twice and ` p` twice: `h ug` is second.

# %%
answer_3 = [(b"u", b"g"), (b"h", b"ug")]
assert check_first_merges(["hug hug hug pug pun"], answer_3)
