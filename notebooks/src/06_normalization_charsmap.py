# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 06 · Normalisation: the precompiled charsmap
#
# Before a SentencePiece model sees any text, the text is **normalised**. Full-width
# `Ｈｅｌｌｏ` becomes `Hello`, `①` becomes `1`, the ligature `ﬁ` becomes `fi`, runs of
# spaces shrink to one, and a `▁` goes in front. The rules ship inside the model file as a
# `precompiled_charsmap`: a compact **double-array trie** (darts-clone's XOR-compressed
# variant, "XCDA") that maps input byte strings to replacement strings. It is NFKC
# compiled ahead of time, so a tokenizer needs no Unicode tables at run time.
#
# **Learning goals**
# 1. Take a charsmap blob apart: a `u32` size, the trie's 32-bit units, and a pool of
#    NUL-terminated replacements.
# 2. Decode XCDA units by hand and walk the trie byte by byte to the longest match.
# 3. State the normalisation rules in order: user-defined symbols, the longest charsmap
#    match, one valid UTF-8 character, else U+FFFD for one byte. Then the whitespace rules.
# 4. Recognise NFKC effects (full-width, circled digits, ligatures, compatibility
#    characters) and where the charsmap differs from Python's `unicodedata`.
# 5. Check labkit's normaliser against sentencepiece's on every line of *Botchan* and on
#    generated text.

# %% [markdown]
# ## 1. The blob
#
# The botchan models store their rules in `normalizer_spec.precompiled_charsmap`. The
# first four bytes are a little-endian `u32`: the size of the trie in bytes. Next come
# that many bytes of trie units, four bytes each. Everything after them is the pool of
# replacement strings, each ending in a NUL byte.

# %%
import struct
import pandas as pd
from labkit.algorithms.charsmap import CharsMap, SpmNormalizer, decode_unit

tok = labkit.load("botchan-unigram", engine="labkit")
blob = tok.vocab.normalizer["charsmap"]
(trie_size,) = struct.unpack_from("<I", blob, 0)
cmap = CharsMap(blob)
print(f"blob {len(blob):,} bytes = 4 (size) + {trie_size:,} (trie: {cmap.num_units:,} units) + {len(cmap.pool):,} (pool)")
assert 4 + trie_size + len(cmap.pool) == len(blob) and cmap.num_units * 4 == trie_size
print(repr(cmap.pool[:60]))

# %% [markdown]
# ## 2. XCDA units, decoded by hand
#
# Each unit is one `u32` that packs four fields:
#
# | bits | field | meaning |
# |---|---|---|
# | 0–7 (+ bit 31) | label | the byte that leads to this node (bit 31 marks a *value* unit, so it never equals a byte) |
# | 8 | has_leaf | a key ends here; its value sits in the child reached by label 0 |
# | 9 | shift | the offset is stored shifted left by 8 more bits |
# | 10–31 | offset | XOR it with the node's index to reach its children's block |
#
# A *value* unit holds, in bits 0–30, the position of the replacement string in the pool.
# The root is unit 0:

# %%
root = decode_unit(cmap.units[0])
root

# %%
manual_offset = (cmap.units[0] >> 10) << ((cmap.units[0] & 0x200) >> 6)
assert manual_offset == root["offset"]
print("root offset", manual_offset)

# %% [markdown]
# To follow byte `b` from a node: `child = node_index ^ offset(node) ^ b`. The child is
# real only if its label equals `b`. Full-width `Ａ` is three UTF-8 bytes, `ef bc a1`:

# %%
walk = cmap.walk("Ａ".encode("utf-8"))
pd.DataFrame(walk)

# %%
# the same walk written out with integer operations only
node, value = 0, None
for byte in "Ａ".encode("utf-8"):
    node = node ^ ((cmap.units[node] >> 10) << ((cmap.units[node] & 0x200) >> 6)) ^ byte
    unit = cmap.units[node]
    assert unit & 0x800000FF == byte, "no such child"
    if unit & 0x100:  # has_leaf: the value is in the child with label 0
        leaf = node ^ ((unit >> 10) << ((unit & 0x200) >> 6))
        value = cmap.units[leaf] & 0x7FFFFFFF
end = cmap.pool.index(b"\0", value)
replacement = cmap.pool[value:end].decode("utf-8")
print(f"value {value} -> pool[{value}:{end}] = {replacement!r}")
assert replacement == "A" == walk[-1]["replacement"]

# %% [markdown]
# ### "What", as llama.cpp walks it
#
# llama.cpp's `llm_tokenizer_ugm::normalize_prefix` runs the same walk over the same
# array. A walkthrough of it under gdb, on `What` with the botchan-bpe model, shows node
# **118** (reached by `W`, whose label checks out) and then node **554**, where the label
# check fails for `h`: no rule starts with `Wh`, so `W` is copied as is. Here are the same
# node numbers, and the size of the array it walks:

# %%
bpe_cmap = CharsMap(labkit.load("botchan-bpe").vocab.normalizer["charsmap"])
what = pd.DataFrame(bpe_cmap.walk(b"What"))
print(f"{bpe_cmap.num_units:,} units")
what

# %%
assert bpe_cmap.num_units == 44_288
assert list(what["index"]) == [118, 554] and list(what["match"]) == [True, False]

# %% [markdown]
# Every key in the trie can be listed with a depth-first walk. The pattern shows: there
# is one rule per compatibility character, and also rules for whole sequences, such as a
# base letter followed by a combining mark, which NFKC composes:

# %%
entries = list(cmap.entries())
print(f"{len(entries):,} keys")
multi = [(k.decode("utf-8"), v) for k, v in entries if len(k.decode("utf-8", "replace")) > 1]
# ascii() spells each code point: these keys look like plain letters on screen
print(f"{len(multi):,} keys longer than one character, e.g.", [(ascii(k), ascii(v)) for k, v in multi[:4]])
assert dict(entries)["①".encode()] == "1"

# %% [markdown]
# ## 3. The normalisation loop
#
# sentencepiece normalises left to right. At each position the first rule that applies
# wins:
#
# 1. a **user-defined symbol** starting here is copied verbatim (the longest one),
# 2. else the **longest charsmap key** starting here is replaced,
# 3. else **one valid UTF-8 character** is copied,
# 4. else (malformed bytes) **U+FFFD** is written and **one byte** is consumed.
#
# Rule 4 only shows up on raw bytes, so `normalize_bytes` is the literal byte-level
# algorithm:

# %%
norm = SpmNormalizer.from_vocab(tok.vocab)
for data in [b"caf\xc3\xa9", b"caf\xc3", b"\xff\xfeok"]:
    out, _ = norm.normalize_bytes(data)
    print(data, "->", out.decode("utf-8"))
assert norm.normalize_bytes(b"\xff\xfeok")[0].decode() == "▁\ufffd\ufffdok"

# %% [markdown]
# Longest match matters: `e` followed by a combining acute accent (`U+0301`) is one
# two-character key that becomes `é`. With `e` alone there is no rule at all:

# %%
for text in ["e", "e\u0301", "e\u0301\u0301"]:
    matches = [(length, cmap.replacement(value)) for length, value in cmap.prefix_matches(text.encode())]
    print(repr(text), "keys that match:", matches, "->", repr(norm.normalize(text)))
assert norm.normalize("e\u0301") == "▁é"

# %% [markdown]
# ## 4. NFKC effects, before and after
#
# The charsmap against Python's own `unicodedata.normalize("NFKC")` (the whitespace rules
# are left out here by normalising without the `▁` prefix):

# %%
import unicodedata

plain = SpmNormalizer(blob, add_dummy_prefix=False, remove_extra_whitespaces=False, escape_whitespaces=False)
examples = {
    "full-width letters": "Ｈｅｌｌｏ", "full-width digits": "２０２６", "ideographic space": "a\u3000b",
    "circled digits": "①⑩⑳", "ligatures": "ﬁﬂﬃ", "squared words": "㍿㌔", "trademark": "™",
    "fractions": "½", "superscripts": "x²", "roman numerals": "Ⅻ", "half-width katakana": "ｶﾀｶﾅ",
    "half-width voiced": "ｶﾞ", "combining sequence": "e\u0301", "micro sign": "µ", "long s": "ſ",
    "ellipsis": "…", "no-break space": "a\u00a0b", "curly quotes": "“x”",
}
rows = []
for kind, text in examples.items():
    ours = plain.normalize(text)
    rows.append({"kind": kind, "before": text, "after": ours, "python NFKC": unicodedata.normalize("NFKC", text),
                 "same as python": ours == unicodedata.normalize("NFKC", text)})
nfkc_table = pd.DataFrame(rows)
nfkc_table

# %%
assert plain.normalize("Ｈｅｌｌｏ") == "Hello" and plain.normalize("①⑩⑳") == "11020"
assert plain.normalize("ﬁﬂﬃ") == "fiflffi" and plain.normalize("㍿") == "株式会社"
print(f"{nfkc_table['same as python'].sum()} of {len(nfkc_table)} agree with Python's NFKC")

# %% [markdown]
# The charsmap was compiled from the Unicode version sentencepiece had at build time. On
# a full sweep of the code points it agrees with Python's NFKC almost everywhere, and the
# differences are characters added to Unicode since then:

# %%
import sys

differ = []
for cp in range(0x20, 0x30000):
    ch = chr(cp)
    if 0xD800 <= cp <= 0xDFFF:
        continue
    if plain.normalize(ch) != unicodedata.normalize("NFKC", ch):
        differ.append(cp)
print(f"python {sys.version_info.major}.{sys.version_info.minor}, unicodedata {unicodedata.unidata_version}: "
      f"{len(differ)} of {0x30000 - 0x20 - 0x800:,} code points differ")
print("first few:", [f"U+{cp:04X} {unicodedata.name(chr(cp), '?')}" for cp in differ[:5]])

# %% [markdown]
# ## 5. The whitespace rules
#
# The replaced pieces then pass through four switches from `normalizer_spec`:
# `remove_extra_whitespaces` drops leading and trailing spaces and squeezes runs,
# `add_dummy_prefix` puts one `▁` in front (or behind, with `treat_whitespace_as_suffix`),
# and `escape_whitespaces` spells spaces as `▁`. All sixteen combinations on one input:

# %%
import itertools

text = "  Hello   ｗｏｒｌｄ  "
rows = []
for extra, prefix, escape, suffix in itertools.product([True, False], repeat=4):
    n = SpmNormalizer(blob, add_dummy_prefix=prefix, remove_extra_whitespaces=extra, escape_whitespaces=escape,
                      treat_whitespace_as_suffix=suffix)
    rows.append({"remove_extra": extra, "dummy_prefix": prefix, "escape": escape, "suffix": suffix,
                 "normalised": repr(n.normalize(text))})
pd.DataFrame(rows)

# %% [markdown]
# sentencepiece has a standalone `SentencePieceNormalizer` with the same switches (all
# but the suffix one), so each combination can be checked:

# %%
import sentencepiece as spm

checked = 0
for extra, prefix, escape in itertools.product([True, False], repeat=3):
    ref = spm.SentencePieceNormalizer(rule_name="nfkc", add_dummy_prefix=prefix, remove_extra_whitespaces=extra,
                                      escape_whitespaces=escape)
    ours = SpmNormalizer(blob, add_dummy_prefix=prefix, remove_extra_whitespaces=extra, escape_whitespaces=escape)
    for sample in [text, " a", "b ", "x  y", "\u3000", ""]:
        assert ours.normalize(sample) == ref.normalize(sample), (extra, prefix, escape, sample)
        checked += 1
print(f"{checked} checks against SentencePieceNormalizer")

# %% [markdown]
# ## 6. Alignment: where each normalised character came from
#
# A tokenizer reports character offsets into the *original* text, so the normaliser also
# returns, for each output character, the offset of the input that produced it. A
# replacement longer than its source maps every output character to the source's start.
# A squeezed run of spaces keeps its first space.

# %%
source = "  Ｈｉ   ①½"
normalized, alignment = norm.normalize_with_alignment(source)
pd.DataFrame({"normalised": list(normalized) + ["(end)"], "from offset": alignment,
              "source char": [repr(source[a]) if a < len(source) else "" for a in alignment]})

# %%
assert normalized == "▁Hi▁11⁄2" and alignment[0] == 2 and alignment[-1] == len(source)

# %% [markdown]
# ## 7. nfkc versus nmt_nfkc
#
# The botchan **BPE** model uses `nmt_nfkc`, which is NFKC plus clean-up for machine
# translation: control characters are removed and tabs and newlines become spaces.

# %%
bpe_blob = labkit.load("botchan-bpe").vocab.normalizer["charsmap"]
nmt = SpmNormalizer(bpe_blob)
rows = [{"input": repr(t), "nfkc": repr(norm.normalize(t)), "nmt_nfkc": repr(nmt.normalize(t))}
        for t in ["tab\there", "new\nline", "bell\x07", "zero\u200bwidth", "Ｗｉｄｅ"]]
pd.DataFrame(rows)

# %%
assert nmt.normalize("tab\there") == "▁tab▁here" and norm.normalize("tab\there") == "▁tab\there"

# %% [markdown]
# ## 8. Check: labkit == sentencepiece on every line and on generated text
#
# First every line of *Botchan*, through both shipped models' normalisers:

# %%
from labkit.paths import data_path

lines = data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n")
for name, ours in [("botchan_en_unigram_1000", norm), ("botchan_en_bpe_1000", nmt)]:
    sp = spm.SentencePieceProcessor(model_file=str(data_path(f"sentencepiece/{name}.model")))
    bad = sum(ours.normalize(line) != sp.normalize(line) for line in lines)
    print(f"{name}: {len(lines)} lines, {bad} differ")
    assert bad == 0

# %% [markdown]
# Then text that `hypothesis` generates: full-width and half-width forms, combining
# marks, CJK, control characters, runs of spaces and arbitrary code points. The settings
# are derandomised, so the run is the same every time.

# %%
from hypothesis import given, settings, strategies as st

sp_unigram = spm.SentencePieceProcessor(model_file=str(data_path("sentencepiece/botchan_en_unigram_1000.model")))
sp_bpe = spm.SentencePieceProcessor(model_file=str(data_path("sentencepiece/botchan_en_bpe_1000.model")))
alphabet = st.one_of(st.sampled_from(list("  \t\n\u3000Ａｂ１ｶﾞ①ﬁ½¨\u0301\u3099中文한\x00\x07\u200b\u2581")),
                     st.characters(blacklist_categories=("Cs",)))
tested = []

@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(st.text(alphabet=alphabet, max_size=30))
def agrees(sample):
    tested.append(sample)
    assert norm.normalize(sample) == sp_unigram.normalize(sample)
    assert nmt.normalize(sample) == sp_bpe.normalize(sample)

agrees()
print(f"{len(tested)} generated texts, all equal")

# %% [markdown]
# ## 9. Speed
#
# Most text has no character that any rule starts with, so the normaliser first checks
# for such characters (`needs_lookup`, one regex search). Only where it finds one does it
# look a rule up: from a memo when the character maps the same whatever surrounds it,
# with a trie walk where a longer rule may start there. Everything in between is copied
# and only the whitespace rules apply. These figures vary from run to run:

# %% tags=["nbval-ignore-output"]
import time

def seconds(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best

megabytes = sum(len(line.encode()) for line in lines) / 1e6
ours_s = seconds(lambda: [norm.normalize(line) for line in lines])
ref_s = seconds(lambda: [sp_unigram.normalize(line) for line in lines])
wide = [line.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)}) for line in lines[:1000]]  # all full-width
wide_mb = sum(len(line.encode()) for line in wide) / 1e6
print(f"botchan lines: labkit {megabytes / ours_s:.1f} MB/s, sentencepiece {megabytes / ref_s:.1f} MB/s")
print(f"full-width lines (a rule per char): labkit {wide_mb / seconds(lambda: [norm.normalize(l) for l in wide]):.2f} MB/s, "
      f"sentencepiece {wide_mb / seconds(lambda: [sp_unigram.normalize(l) for l in wide]):.1f} MB/s")

# %% [markdown]
# ## Try it
#
# Replace each `...` with your answer and run the cell. Each checker prints `right`, or
# `wrong` with what is wrong; worked answers are in
# `solutions/06_normalization_charsmap.ipynb`.
#
# 1. What does the botchan model make of `Ｆｕｌｌ  ｗｉｄｔｈ`?
# 2. What does the charsmap replace `⑦` with? And `ﬀ`? And plain `a`?

# %%
from labkit.exercises.unigram import check_charsmap_replacement, check_normalized

check_normalized("Ｆｕｌｌ  ｗｉｄｔｈ", ...)
check_charsmap_replacement("⑦", ...)
check_charsmap_replacement("ﬀ", ...)
check_charsmap_replacement("a", ...)

# %% [markdown]
# ## Summary
#
# - A precompiled charsmap is a `u32` trie size, XCDA units and a pool of NUL-terminated
#   replacements. It is NFKC compiled into a trie.
# - Walking it is XOR arithmetic: `child = index ^ offset ^ byte`, valid when the child's
#   label is the byte. A leaf's value unit points into the pool.
# - At each position: user-defined symbol, else the longest charsmap match, else one UTF-8
#   character, else U+FFFD for one byte. Then the whitespace rules: squeeze, dummy `▁`,
#   escape.
# - labkit's normaliser equals sentencepiece's on every *Botchan* line and on generated
#   text, and it returns the alignment that offsets need.
