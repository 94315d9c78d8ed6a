# %% [markdown]
# # 09 · Worked answers to the "Try it" exercises
#
# The exercises of `notebooks/09_stop_sequences_jail.ipynb`, answered and checked.

# %%
from labkit.exercises.stop import check_jail, check_shown, check_stop_filter

# %% [markdown]
# ## 1. The jail after `"Done.<|e"`
#
# `"<|e"` is the start of `"<|eot_id|>"` (and `"<|"` of both): the longest end of the text
# that a stop string starts with is `"<|e"`.

# %%
assert check_jail("Done.<|e", ["<|im_end|>", "<|eot_id|>"], "<|e")

# %% [markdown]
# ## 2. What the reader sees of `"xabcde"`
#
# The hidden `"bc"` ends at index 3, before the visible `"abcd"` ends at index 4, so it wins:
# it is cut off, and everything after it is dropped.

# %%
assert check_shown("xabcde", "xa", hidden=["bc"], visible=["abcd"])

# %% [markdown]
# ## 3. A stop filter over chunks

# %%
def my_filter(chunks, stops):
    shown, jail = [], ""
    for chunk in chunks:
        text = jail + chunk
        ends = [(text.find(s) + len(s), -len(s), s) for s in stops if s in text]
        if ends:  # a stop completed (it may have started in the jail): cut it, stop
            end, _, stop = min(ends)
            shown.append(text[: end - len(stop)])
            return shown
        keep = max((k for k in range(1, len(text) + 1) if any(len(s) > k and s.startswith(text[-k:]) for s in stops)),
                   default=0)
        jail = text[len(text) - keep:]
        shown.append(text[: len(text) - keep])
    shown.append(jail)  # no stop: the jail is released at the end
    return shown


assert check_stop_filter(my_filter)
# showing each chunk at once (no jail) is wrong, and the checker says where
assert not check_stop_filter(lambda chunks, stops: list(chunks) + [""])
