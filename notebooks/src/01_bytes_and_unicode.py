# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 01 · Bytes and Unicode: what a tokenizer actually reads
#
# Before any merging or lattice, a tokenizer has to decide what its *alphabet* is. Modern
# LLM tokenizers pick one of two answers, and both start from the UTF-8 bytes of the text:
#
# * **byte-level BPE** (GPT-2, Llama-3, Qwen2, GPT-4's cl100k) works on the 256 byte values
#   and spells each byte with one printable character (the GPT-2 byte map, `Ġ` for a space);
# * **SentencePiece** (Llama-2) works on characters, writes the space as `▁`, and falls back
#   to `<0xNN>` byte pieces for characters it does not know.
#
# **Learning goals**
# 1. Read the UTF-8 bytes of any text and say why characters take 1 to 4 bytes.
# 2. Build GPT-2's byte-to-unicode map yourself and explain why 68 bytes move to U+0100 and up.
# 3. Read a byte-level token (`Ġworld`, `Ã©`, `Ċ`) back to text, and see why decoding can produce U+FFFD.
# 4. Recognise `▁` and `<0xNN>` in a SentencePiece vocabulary.

# %% [markdown]
# ## 1. Text is code points; the tokenizer sees bytes
#
# A Python `str` is a sequence of Unicode code points. UTF-8 writes each code point with
# 1 byte (ASCII), 2 bytes (up to U+07FF), 3 bytes (up to U+FFFF) or 4 bytes (beyond).

# %%
sample = "Aé日😀"
for ch in sample:
    data = ch.encode("utf-8")
    print(f"{ch!r:6} U+{ord(ch):05X}  {len(data)} byte(s): {' '.join(f'{b:02X}' for b in data)}")
assert [len(ch.encode("utf-8")) for ch in sample] == [1, 2, 3, 4]

# %% [markdown]
# The lead byte says how long the sequence is (`0xxxxxxx`, `110xxxxx`, `1110xxxx`, `11110xxx`)
# and every following byte is a continuation `10xxxxxx`. So a cut in the middle of a
# character leaves bytes that are not valid UTF-8 on their own:

# %%
emoji = "😀".encode("utf-8")
for cut in range(1, 5):
    print(cut, emoji[:cut], "->", repr(emoji[:cut].decode("utf-8", errors="replace")))
assert emoji[:3].decode("utf-8", errors="replace") == "\ufffd"

# %% [markdown]
# Working on bytes means **no unknown token, ever**: every text is a sequence over 256 symbols.
# The price is that a token may hold part of a character, and a text decoded from a prefix of
# the tokens may end in U+FFFD (notebook 08 deals with that when streaming).

# %% [markdown]
# ## 2. The GPT-2 byte map
#
# Byte-level vocabularies are stored as *strings* (`vocab.json`, `merges.txt`, GGUF token
# arrays), so each byte needs a character. Latin-1 gives every byte value a code point, but
# 68 of them are useless in a text file: controls (0x00-0x1F, 0x7F-0x9F), the space 0x20,
# the no-break space 0xA0, and the invisible soft hyphen 0xAD. GPT-2 keeps the 188 visible
# ones and moves the 68 others, in byte order, to U+0100, U+0101, ...

# %%
from labkit.algorithms.bytes_unicode import (
    bytes_to_unicode, unicode_to_bytes, moved_bytes, is_printable_byte, text_to_gpt2, gpt2_to_bytes,
    gpt2_to_text, bytes_to_gpt2, byte_fallback_piece,
)

table = bytes_to_unicode()
moved = moved_bytes()
print("kept:", 256 - len(moved), " moved:", len(moved))
print("space 0x20 ->", table[0x20], f"U+{ord(table[0x20]):04X}", " newline 0x0A ->", table[0x0A], " soft hyphen 0xAD ->", table[0xAD])
assert len(moved) == 68 and table[0x20] == "Ġ" and table[0x0A] == "Ċ"
assert [ord(table[b]) for b in moved] == list(range(0x100, 0x100 + 68))
assert all(table[b] == chr(b) for b in range(256) if is_printable_byte(b))

# %% [markdown]
# The space is the 33rd moved byte (after 0x00-0x1F), so it lands on U+0100 + 32 = U+0120 `Ġ`.
# The whole map as a 16×16 grid: row = high nibble, column = low nibble; moved bytes shaded.

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 7))
for b in range(256):
    row, col = divmod(b, 16)
    shaded = not is_printable_byte(b)
    ax.add_patch(plt.Rectangle((col, 15 - row), 1, 1, color="#ffd6a5" if shaded else "#e8f4ff"))
    ax.text(col + 0.5, 15 - row + 0.5, table[b], ha="center", va="center", fontsize=10)
ax.set_xlim(0, 16); ax.set_ylim(0, 16)
ax.set_xticks([i + 0.5 for i in range(16)], [f"{i:X}" for i in range(16)])
ax.set_yticks([i + 0.5 for i in range(16)], [f"{15 - i:X}_" for i in range(16)])
ax.set_title("GPT-2 byte -> character (orange: moved to U+0100+)")
ax.tick_params(length=0)
plt.show()

# %% [markdown]
# The same grid as text (the static version of the figure):

# %%
print("    " + " ".join(f"_{c:X}" for c in range(16)))
for row in range(16):
    print(f"{row:X}_  " + "  ".join(table[row * 16 + col] for col in range(16)))

# %% [markdown]
# ### Spot the bug: two cells of a published byte map
#
# A book chapter on llama.cpp's tokenizer (Akunu) prints this byte map with two cells wrong:
# the ones for 0xA0 and 0xAD. Before running the next cell, say what GPT-2's map gives those
# two bytes. (Hint: both sit inside the Latin-1 range 0xA1-0xFF that is otherwise kept as it
# is, and both are invisible in a text file.)

# %%
import unicodedata

for b in (0xA0, 0xAD):
    print(f"0x{b:02X} {unicodedata.name(chr(b))!s:18} -> {table[b]} U+{ord(table[b]):04X}  (moved #{moved.index(b) + 1} of 68)")
assert not is_printable_byte(0xA0) and not is_printable_byte(0xAD)
assert (table[0xA0], table[0xAD]) == ("\u0142", "\u0143")  # the last two moved bytes: U+0100 + 66, + 67

# %% [markdown]
# ## 3. Reading byte-level tokens
#
# To spell a text the byte-level way, encode it as UTF-8 and map each byte. ASCII letters stay
# themselves; a leading space becomes `Ġ`; a newline `Ċ`; and `é` (bytes C3 A9) becomes `Ã©`:
# the familiar mojibake, because the two bytes are shown one character each.

# %%
for text in [" hello", "line\n", "café", "日本", "😀"]:
    print(f"{text!r:10} -> {text_to_gpt2(text)!r}")
assert text_to_gpt2(" hello\n") == "ĠhelloĊ" and text_to_gpt2("é") == "Ã©"
assert gpt2_to_bytes("Ġhello") == b" hello" and gpt2_to_text("ĠhelloĊ") == " hello\n"

# %% [markdown]
# A real vocabulary: GPT-2's tokens for a sentence, and the bytes behind each one.

# %%
gpt2 = labkit.load("gpt2")  # labkit's own byte-level BPE engine
enc = gpt2.encode("Hello world,\n naïve café 😀")
for token_id, token in zip(enc.ids, enc.tokens):
    print(f"{token_id:6}  {token!r:10} {gpt2_to_bytes(token)!r}")

# %% [markdown]
# Check against the reference (`tokenizers`): same ids and the same token strings, and the
# byte map is exactly `tokenizers`' ByteLevel alphabet.

# %%
from tokenizers import pre_tokenizers

reference = labkit.load("gpt2", engine="hf")
ref_enc = reference.encode("Hello world,\n naïve café 😀")
assert enc.ids == ref_enc.ids and enc.tokens == ref_enc.tokens
assert set(table.values()) == set(pre_tokenizers.ByteLevel.alphabet())
# every ordinary GPT-2 token is a valid spelling of some bytes
spellable = sum(1 for t in gpt2.vocab.tokens if all(ch in unicode_to_bytes() for ch in t))
print(f"{spellable} of {gpt2.vocab_size} GPT-2 tokens are byte spellings")
assert spellable == gpt2.vocab_size  # even <|endoftext|> is printable ASCII

# %% [markdown]
# ## 4. Decoding: join the bytes, then UTF-8
#
# A token can hold part of a character: the emoji 😀 is four bytes, and GPT-2 has no token
# for it, so it is several tokens. Decoding a prefix of those tokens leaves incomplete UTF-8,
# which becomes U+FFFD.

# %%
ids = gpt2.encode("😀").ids
print("ids:", ids, "tokens:", [gpt2.id_to_token(i) for i in ids])
for cut in range(len(ids) + 1):
    print(cut, repr(gpt2.decode(ids[:cut])))
assert gpt2.decode(ids) == "😀" and "\ufffd" in gpt2.decode(ids[:1])
assert [gpt2.decode(ids[:c]) for c in range(len(ids) + 1)] == [reference.decode(ids[:c]) for c in range(len(ids) + 1)]

# %% [markdown]
# ## 5. The other convention: `▁` and `<0xNN>` (SentencePiece)
#
# Llama-2's SentencePiece vocabulary is made of *characters*, not bytes. It writes the space as
# `▁` (U+2581) and, for a character that is not in its 32,000 pieces, it falls back to one
# `<0xNN>` piece per UTF-8 byte (notebook 03 builds that engine).

# %%
spm = labkit.load("llama-spm")
spm_enc = spm.encode("Hello world 🤗 ℤ")
print(spm_enc.tokens)
assert spm_enc.ids == labkit.load("llama-spm", engine="sentencepiece").encode("Hello world 🤗 ℤ").ids
assert [byte_fallback_piece(b) for b in "🤗".encode("utf-8")] == spm_enc.tokens[3:7]

# %% [markdown]
# Side by side, the same byte in the two spellings:

# %%
for b in (0x20, 0x0A, 0xE6, 0xF0):
    print(f"byte 0x{b:02X}:  GPT-2 {table[b]!r:6}  SentencePiece {byte_fallback_piece(b)!r}")

# %% [markdown]
# ## 6. The byte map in vocabularies people bring
#
# Two things the byte map implies that a vocabulary may test. First, an *added* token is stored
# as text, but `tokenizers`' ByteLevel decoder maps every character of the byte alphabet to its
# byte, added tokens included: a token spelled `über` decodes to byte 0xFC (`ü` stands for it)
# plus `ber`, which is not valid UTF-8. Second, some real byte-level vocabularies lack a few
# single-byte tokens (0x0B, or lead bytes 0xF1/0xF2 that no text in their training data used);
# `tokenizers` then drops that byte and encodes the rest, and labkit does the same.

# %%
from labkit.algorithms.bytes_unicode import decode_like_byte_level

print(decode_like_byte_level("über"), decode_like_byte_level("<|im_end|>"))
assert decode_like_byte_level("über") == b"\xfcber" and decode_like_byte_level("<|im_end|>") == b"<|im_end|>"
assert decode_like_byte_level("über").decode("utf-8", "replace") == "\ufffdber"

# %% [markdown]
# ## 7. Which Unicode? Three character databases
#
# Byte-level tokenizers ask Unicode two questions: *which class is this character* (letter,
# number, mark: the split regexes of notebook 02) and *what is its normal form* (NFC, for
# Qwen2 and others). Python's `unicodedata`, the `regex` module and the Oniguruma engine inside
# `tokenizers` each carry their own copy of the Unicode database, of different ages. Measured
# here, not assumed:

# %%
import unicodedata

import regex
from tokenizers import Regex, normalizers
from tokenizers import pre_tokenizers as hf_pre

from labkit.algorithms.pretokenize import REFERENCE_STARTERS, nfc_with_offsets, reference_nfc

print("Python unicodedata:", unicodedata.unidata_version)
reference_nfc_step = normalizers.NFC()
marks = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF
         and (unicodedata.combining(chr(cp)) or unicodedata.decomposition(chr(cp)))]
probes = ("a{}\u0334", "a\u05b0{}", "{}", "a{}\u0323", "a\u0301{}")
nfc_gap = sorted(cp for cp in marks if any(
    reference_nfc_step.normalize_str(p.format(chr(cp))) != unicodedata.normalize("NFC", p.format(chr(cp))) for p in probes))
print(f"{len(marks)} marks and decomposable characters probed; tokenizers' NFC differs from Python's on {len(nfc_gap)}:")
print(" ", ", ".join(f"U+{cp:04X}" for cp in nfc_gap[:12]), "...")
assert set(nfc_gap) == REFERENCE_STARTERS and len(nfc_gap) == 98

# %% [markdown]
# All 98 are combining marks Python (Unicode 14) gives a combining class, while `tokenizers`'
# normalisation tables are older and treat them as plain starters, so Python would *reorder*
# them and `tokenizers` does not. labkit's NFC follows the reference: it treats exactly these
# as starters (`reference_nfc`), so `'\u0898\u0899'` keeps its order on every engine:

# %%
pair = "\u0898\u0899"
print("Python NFC reorders:", [f"U+{ord(c):04X}" for c in unicodedata.normalize("NFC", pair)],
      " tokenizers keeps:", [f"U+{ord(c):04X}" for c in reference_nfc_step.normalize_str(pair)])
qwen_ids = {engine: labkit.load("qwen2", engine=engine).encode(pair).ids for engine in ("labkit", "hf", "tiktoken")}
print(qwen_ids)
assert reference_nfc(pair) == reference_nfc_step.normalize_str(pair) == pair
assert qwen_ids["labkit"] == qwen_ids["hf"] == qwen_ids["tiktoken"]

# %% [markdown]
# The offsets of a normalised character follow `tokenizers` too: a composed `é` points at the
# `e` it starts from, not at both code points.

# %%
print(nfc_with_offsets("cafe\u0301"))
assert nfc_with_offsets("cafe\u0301")[1][-1] == (3, 4)

# %% [markdown]
# The character classes must agree too: `regex` runs labkit's split patterns, Oniguruma
# (inside `tokenizers`) and Rust's `regex` crate (inside tiktoken) run the references'. The
# `regex` module's releases from 2025.10.23 on carry Unicode 17 and call 17,144 code points
# letters that both references still call unassigned, so text written in those new scripts
# split differently (the property tests found `"\U0003d000's"`: one piece or two). labkit
# therefore requires a `regex` release before that one (`pyproject.toml`). Measured over every
# code point Python's own database leaves unassigned, class by class. Oniguruma takes about a
# second per class over all 830,000 of them, so it is asked about planes 0 to 3 only, where
# every newer character lies; the cell checks that `regex`'s newer tables put none of these
# classes in any other plane (the test suite asks Oniguruma about every plane):

# %%
unassigned_all = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and unicodedata.category(chr(cp)) == "Cn")
unassigned = "".join(ch for ch in unassigned_all if ord(ch) < 0x40000)  # planes 0-3
assert not any(regex.search(rf"\p{{{cls}}}", unassigned_all[len(unassigned):]) for cls in "LNMPS")  # none beyond
gap = {}
for cls in "LNMPS":
    in_regex = set(regex.findall(rf"\p{{{cls}}}", unassigned))
    left = set("".join(p for p, _ in hf_pre.Split(Regex(rf"\p{{{cls}}}"), behavior="removed").pre_tokenize_str(unassigned)))
    in_oniguruma = set(unassigned) - left
    gap[cls] = (len(in_regex), len(in_regex - in_oniguruma), len(in_oniguruma - in_regex))
for cls, (count, regex_only, oniguruma_only) in gap.items():
    print(f"\\p{{{cls}}}: {count:5,} code points newer than Python's tables; "
          f"{regex_only} only in regex's class, {oniguruma_only} only in Oniguruma's")
assert all(regex_only == oniguruma_only == 0 for _, regex_only, oniguruma_only in gap.values())
assert gap["L"][0] > 9_000  # the check is not vacuous: thousands of code points newer than Python's

# %% [markdown]
# Both tables agree on every one of them. The agreement is pinned by tests
# (`tests/test_unicode_tables.py` against tiktoken and `tokenizers` on letters the newer
# `regex` releases know, and `tests/test_spmgguf_sweep_regressions.py` class by class), so a
# library upgrade that moves either side fails loudly.

# %% [markdown]
# ## Try it
# Replace each `...` with your answer and run the cell: the checker prints `right`, or
# `wrong` with a hint that says which part is off. Worked answers:
# `notebooks/solutions/01_bytes_and_unicode.ipynb`.
#
# 1. How many UTF-8 bytes does `"naïve 😀"` take? Hint 1: not `len(...)` of the string,
#    which counts code points. Hint 2: `ï` is past U+007F and `😀` past U+FFFF.

# %%
from labkit.exercises.bpe import check_gpt2_char, check_gpt2_spelling, check_utf8_length

answer_1 = ...
check_utf8_length("naïve 😀", answer_1)

# %% [markdown]
# 2. Which character does the tab byte `0x09` get in GPT-2's map? Hint 1: a tab is not
#    printable, so it is one of the moved bytes, not `"\t"`. Hint 2: the moved bytes take
#    U+0100, U+0101, ... in byte order, and every byte below `0x21` is moved.

# %%
answer_2 = ...
check_gpt2_char(0x09, answer_2)

# %% [markdown]
# 3. How does GPT-2 spell `" über"`? Hint 1: the space is a byte too (`Ġ`). Hint 2: `ü` is
#    two UTF-8 bytes, so it is spelled with two characters of the map, not with `ü`.

# %%
answer_3 = ...
check_gpt2_spelling(" über", answer_3)

# %% [markdown]
# ## Summary
# * UTF-8 writes a code point with 1-4 bytes; byte-level tokenizers work on those bytes, so
#   nothing is ever unknown, but tokens can split characters and decoded prefixes can end in U+FFFD.
# * GPT-2's map keeps the 188 visible Latin-1 bytes and moves the 68 others (controls, space,
#   NBSP, soft hyphen) to U+0100+: hence `Ġ` for a space and `Ċ` for a newline.
# * SentencePiece writes spaces as `▁` and falls back to `<0xNN>` byte pieces.
# * Added tokens decode through the byte map too; a byte with no token is dropped, as in `tokenizers`.
# * Python, `regex` and `tokenizers` carry different Unicode versions: labkit's NFC follows
#   `tokenizers` (98 marks treated as starters), and labkit keeps a `regex` release whose
#   character classes equal Oniguruma's on every code point newer than Python's tables.
# * Next, notebook 02 merges these bytes into tokens with rank BPE.
