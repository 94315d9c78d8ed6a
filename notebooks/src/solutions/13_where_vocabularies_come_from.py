# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 13 · Where vocabularies come from: worked answers
# Answers to the "Try it" exercises of `13_where_vocabularies_come_from.ipynb`, each worked
# out step by step and then given to the same checker the exercise uses.

# %%
from fractions import Fraction

from labkit.exercises.training import check_em_step, check_most_likely_sample, check_spread_at_zero

# %% [markdown]
# **1. One EM step by hand.** Every piece starts at probability 1/5. A segmentation weighs
# the product of its pieces' probabilities; a word's count is shared among its
# segmentations in proportion to their weights.
#
# * `ab` (×2): `a|b` weighs 1/25, `ab` weighs 1/5 = 5/25: shares 1/6 and 5/6.
# * `bc` (×1): the same, 1/6 and 5/6.
# * `abc` (×1): `a|b|c` 1/125, `ab|c` and `a|bc` 5/125 each: shares 1/11, 5/11, 5/11.
#
# Expected counts: `a` = 2·1/6 + 1/11 + 5/11, `b` = 2·1/6 + 1/6 + 1/11,
# `c` = 1/6 + 1/11 + 5/11, `ab` = 2·5/6 + 5/11, `bc` = 5/6 + 5/11. The M-step divides each
# by their total.

# %%
sixth, eleventh = Fraction(1, 6), Fraction(1, 11)
counts = {
    "a": 2 * sixth + eleventh + 5 * eleventh,
    "b": 2 * sixth + sixth + eleventh,
    "c": sixth + eleventh + 5 * eleventh,
    "ab": 2 * 5 * sixth + 5 * eleventh,
    "bc": 5 * sixth + 5 * eleventh,
}
total = sum(counts.values())
new_probabilities = {piece: float(count / total) for piece, count in counts.items()}
print({piece: round(p, 4) for piece, p in new_probabilities.items()}, "total expected count:", total)
assert check_em_step({"ab": 2, "abc": 1, "bc": 1}, dict.fromkeys(["a", "b", "c", "ab", "bc"], 0.2), new_probabilities)

# %% [markdown]
# `ab` gains most: it is the single most likely piece in two words. Real trainers repeat
# this until the probabilities settle, then prune.
#
# **2. alpha → ∞.** A segmentation is drawn with probability proportional to
# `exp(alpha · score)`. As alpha grows, the ratio between the best path and any other,
# `exp(alpha · (best - other))`, grows without bound: the sample is the Viterbi path.

# %%
tok = labkit.load("botchan-unigram")
most_likely = tok.encode("the school").tokens
print(most_likely)
assert check_most_likely_sample("the school", most_likely)

# %% [markdown]
# **3. alpha → 0.** Every segmentation weighs `exp(0) = 1`, so they are equally likely:
# each gets 1 / (number of segmentations). sentencepiece lists them all when asked for
# more best paths than exist.

# %%
import sentencepiece as spm

from labkit.paths import data_path

sp = spm.SentencePieceProcessor(model_file=str(data_path("sentencepiece/botchan_en_unigram_1000.model")))
count = len(sp.nbest_encode_as_ids("botchan", 512))
print(count, "segmentations")
assert check_spread_at_zero("botchan", f"1/{count}")
