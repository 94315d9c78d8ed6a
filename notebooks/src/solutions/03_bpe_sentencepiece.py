# %% [markdown]
# # 03 · SentencePiece BPE: worked answers to "Try it"
#
# The exercises of `03_bpe_sentencepiece`, answered and checked with the notebook's checkers.

# %%
import labkit
from labkit.exercises.spm import check_byte_pieces, check_llama_tokens, check_rank_bpe_chars, check_score_bpe

# %% [markdown]
# **1.** `a b a b`: the pairs `ab` (-3), `ba` (-3), `ab` (-3) tie, so the leftmost merges:
# `ab a b`. Now `aba` (-4) and `ab` (-3) compete: `ab` scores higher, so `ab ab`. `abab` is
# not a piece, so that is the end.

# %%
answer_1 = ["ab", "ab"]
assert check_score_bpe({"a": -1, "b": -2, "ab": -3, "ba": -3, "aba": -4}, "abab", answer_1)

# %% [markdown]
# **2.** The two spaces become `▁▁` and the dummy prefix adds one more: `▁▁▁hi`. `▁▁` and
# `▁▁▁` are hand-made pieces scored -10⁹, far below `▁h` and `hi`, so `▁hi` forms first and
# the two remaining `▁` merge last.

# %%
llama = labkit.load("llama-spm")
answer_2 = ["▁▁", "▁hi"]
assert check_llama_tokens("  hi", answer_2)
assert llama.encode("  hi").tokens == answer_2

# %% [markdown]
# **3.** `€` is U+20AC, UTF-8 `E2 82 AC`; byte pieces are spelled `<0xNN>` with upper-case hex.

# %%
answer_3 = [f"<0x{b:02X}>" for b in "€".encode("utf-8")]
assert answer_3 == ["<0xE2>", "<0x82>", "<0xAC>"]
assert check_byte_pieces("€", answer_3)

# %% [markdown]
# **4.** The pairs are `ab` (rank 0), `bc` (1), `cb` (not listed) and `bc` (1): `ab` goes
# first, leaving `ab c b c`. Now `(ab, c)` has rank 2 and the second `(b, c)` rank 1, so that
# one merges: `ab c bc`. Then `(ab, c)` merges: `abc bc`, and `(abc, bc)` is not listed.

# %%
answer_4 = ["abc", "bc"]
assert check_rank_bpe_chars([("a", "b"), ("b", "c"), ("ab", "c")], "abcbc", answer_4)
