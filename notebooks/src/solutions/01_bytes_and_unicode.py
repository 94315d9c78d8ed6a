# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 01 · Bytes and Unicode: worked answers to "Try it"
#
# The exercises of `01_bytes_and_unicode`, answered and checked with the notebook's checkers.

# %%
from labkit.algorithms.bytes_unicode import bytes_to_unicode
from labkit.exercises.bpe import check_gpt2_char, check_gpt2_spelling, check_utf8_length

# %% [markdown]
# **1.** Count per character: `n`, `a`, `v`, `e` and the space are ASCII (1 byte each), `ï`
# (U+00EF) takes 2, `😀` (U+1F600, past U+FFFF) takes 4. The slip the checker catches is
# `len("naïve 😀")`, which counts the 7 code points.

# %%
per_character = {c: len(c.encode("utf-8")) for c in "naïve 😀"}
print(per_character)
answer_1 = 1 + 1 + 2 + 1 + 1 + 1 + 4
assert answer_1 == sum(per_character.values())
assert check_utf8_length("naïve 😀", answer_1)
assert not check_utf8_length("naïve 😀", len("naïve 😀"))

# %% [markdown]
# **2.** Every byte from 0x00 to 0x20 is moved (controls and the space), in byte order, to
# U+0100 onwards: 0x09 is the tenth of them, so it gets U+0109, `ĉ`.

# %%
moved = [b for b in range(256) if bytes_to_unicode()[b] != chr(b)]
answer_2 = chr(0x100 + moved.index(0x09))
print(repr(answer_2), f"U+{ord(answer_2):04X}")
assert check_gpt2_char(0x09, answer_2)
assert not check_gpt2_char(0x09, "\t")

# %% [markdown]
# **3.** The UTF-8 bytes of `" über"` are `20 C3 BC 62 65 72`: the space is `Ġ`, the two bytes
# of `ü` are spelled `Ã` (0xC3) and `¼` (0xBC), the ASCII letters stay.

# %%
utf8 = " über".encode("utf-8")
print(utf8.hex(" "))
answer_3 = "".join(bytes_to_unicode()[b] for b in utf8)
print(answer_3)
assert answer_3 == "ĠÃ¼ber"
assert check_gpt2_spelling(" über", answer_3)
assert not check_gpt2_spelling(" über", "Ġüber")
