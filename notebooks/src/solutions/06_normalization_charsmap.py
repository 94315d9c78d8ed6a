# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 06 · The charsmap: worked answers
# Answers to the "Try it" exercises of `06_normalization_charsmap.ipynb`, each worked out and
# then given to the same checker the exercise uses.

# %%
import unicodedata

from labkit.algorithms.charsmap import CharsMap
from labkit.exercises.unigram import check_charsmap_replacement, check_normalized

tok = labkit.load("botchan-unigram", engine="labkit")
cmap = CharsMap(tok.vocab.normalizer["charsmap"])

# %% [markdown]
# **1.** NFKC turns each full-width letter into its ASCII twin; then the whitespace rules
# squeeze the two spaces to one, put `▁` in front and turn the space into `▁`.

# %%
folded = unicodedata.normalize("NFKC", "Ｆｕｌｌ  ｗｉｄｔｈ")
answer = "\u2581" + "\u2581".join(folded.split())
print(ascii(folded), "->", answer)
assert check_normalized("Ｆｕｌｌ  ｗｉｄｔｈ", answer)

# %% [markdown]
# **2.** Walk each character's UTF-8 bytes through the trie: `⑦` and `ﬀ` are keys (their
# replacements are NFKC's), `a` is not, so it is copied.

# %%
for char in ("⑦", "ﬀ", "a"):
    match = cmap.longest_match(char.encode("utf-8"))
    answer = match.replacement if match is not None else char
    print(ascii(char), "->", ascii(answer))
    assert check_charsmap_replacement(char, answer)
