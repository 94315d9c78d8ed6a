# %% [markdown]
# # 03 · SentencePiece BPE: worked answers to "Try it"
#
# The exercises of `03_bpe_sentencepiece`, answered and checked with the notebook's checkers.

# %%
import labkit
from labkit.exercises.spm import check_score_bpe, check_llama_tokens, check_byte_pieces

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
