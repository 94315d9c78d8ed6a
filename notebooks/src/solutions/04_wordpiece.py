# %% [markdown]
# # 04 · WordPiece: worked answers to "Try it"
#
# The exercises of `04_wordpiece`, answered and checked with the notebook's checkers.

# %%
import labkit
from labkit.exercises.wordpiece import check_basic_words, check_wordpiece, check_bert_tokens

# %% [markdown]
# **1.** Lowercase, strip accents (`ç` -> `c`, `û` -> `u`), split on spaces, and cut every
# punctuation or symbol character out as its own word.

# %%
answer_1 = ["ca", "coute", "5", "$", "(", "environ", ")", "!"]
assert check_basic_words("Ça coûte 5$ (environ)!", answer_1)

# %% [markdown]
# **2.** `playing`: the longest piece at 0 is `play`, then `##ing`. `plays`: `play`, then no
# piece starts with `##s`, so the whole word is `[UNK]`.

# %%
answer_2a, answer_2b = ["play", "##ing"], ["[UNK]"]
assert check_wordpiece(["[UNK]", "play", "##ing", "##in", "p", "##lay"], "playing", answer_2a)
assert check_wordpiece(["[UNK]", "play", "##ing", "##in", "p", "##lay"], "plays", answer_2b)

# %% [markdown]
# **3.** Lowercased to `tokenization !`; BERT's vocabulary has `token` and `##ization`.

# %%
answer_3 = ["token", "##ization", "!"]
assert check_bert_tokens("Tokenization!", answer_3)
assert labkit.load("bert-bge").encode("Tokenization!").tokens == answer_3
