# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 05 · Unigram: worked answers
# Answers to the "Try it" exercises of `05_unigram_trie_viterbi.ipynb`, each worked out and
# then given to the same checker the exercise uses.

# %%
from itertools import combinations

from labkit.exercises.unigram import check_best_score, check_botchan_tokens, check_viterbi, check_viterbi_function

# %% [markdown]
# **1.** `ab` can be cut two ways: `a | b` scores -1 + -2 = -3, `ab` scores its own score.
# With -3.5, the cut wins; with -2.5, the whole piece wins.

# %%
def cuts(text):
    """Every way to cut text into non-empty parts."""
    for k in range(len(text)):
        for points in combinations(range(1, len(text)), k):
            bounds = (0, *points, len(text))
            yield [text[a:b] for a, b in zip(bounds, bounds[1:])]

def best_cut(scores, text):
    return max((c for c in cuts(text) if all(p in scores for p in c)), key=lambda c: sum(scores[p] for p in c))

first, second = {"a": -1, "b": -2, "ab": -3.5}, {"a": -1, "b": -2, "ab": -2.5}
print(best_cut(first, "ab"), best_cut(second, "ab"))
assert check_viterbi(first, "ab", best_cut(first, "ab"))
assert check_viterbi(second, "ab", best_cut(second, "ab"))

# %% [markdown]
# **2.** `abab` is best cut `ab | ab`: -2.5 twice.

# %%
total = sum(second[p] for p in best_cut(second, "abab"))
print(best_cut(second, "abab"), total)
assert check_best_score(second, "abab", total)

# %% [markdown]
# **3.** Normalised, `Botchan` is `▁Botchan`; the model has no piece for the whole name, so the
# best cut uses the pieces the lattice offers.

# %%
tokens = labkit.load("botchan-unigram").encode("Botchan").tokens
print(tokens)
assert check_botchan_tokens("Botchan", tokens)

# %% [markdown]
# **4.** Build it: the forward pass over substrings, float sums, the unknown piece where no
# single-character piece fits, the backtrack, and unknown runs merged.

# %%
from labkit.algorithms.unigram import to_float32
from labkit.core import TOKEN_NORMAL

tok = labkit.load("botchan-unigram", engine="labkit")
vocab = {}
for i, (piece, score, kind) in enumerate(zip(tok.vocab.tokens, tok.vocab.scores, tok.vocab.token_types)):
    if kind == TOKEN_NORMAL:
        vocab.setdefault(piece, (i, to_float32(score)))
longest = max(map(len, vocab))

def my_viterbi(text):
    best, back = [0.0] + [None] * len(text), [None] * (len(text) + 1)
    for i in range(len(text)):
        for j in range(i + 1, min(len(text), i + longest) + 1):
            piece_id, score = vocab.get(text[i:j], (None, None))
            if piece_id is None:
                if j > i + 1 or text[i] in vocab:
                    continue
                piece_id, score = tok.model.unk_id, tok.model.unk_score
            offer = to_float32(best[i] + score)
            if best[j] is None or offer > best[j]:
                best[j], back[j] = offer, (i, piece_id)
    ids, j = [], len(text)
    while j > 0:
        i, piece_id = back[j]
        if not (piece_id == tok.model.unk_id and ids and ids[-1] == tok.model.unk_id):
            ids.append(piece_id)
        j = i
    return ids[::-1]

assert check_viterbi_function(my_viterbi)
