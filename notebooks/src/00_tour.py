# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 00 · A tour: six real tokenizers on the same text
#
# A language model never sees characters. A **tokenizer** first cuts the text into pieces
# from a fixed vocabulary and hands the model their **ids**. Every model family cuts
# differently, and this lab book takes each way apart, one notebook at a time.
# Here we only look: six real vocabularies, shipped with labkit, on the same sentences.
#
# | name | model | algorithm | file |
# |---|---|---|---|
# | `gpt2` | GPT-2 | byte-level BPE | llama.cpp GGUF |
# | `llama-spm` | Llama-2 | SentencePiece BPE with byte fallback | llama.cpp GGUF |
# | `qwen2` | Qwen2 | byte-level BPE, NFC, one digit at a time | llama.cpp GGUF |
# | `bert-bge` | BERT (bge-small, uncased) | WordPiece | llama.cpp GGUF |
# | `botchan-unigram` | a 1,000-piece model trained on *Botchan* | SentencePiece Unigram | sentencepiece `.model` |
# | `cl100k_base` | GPT-4 / GPT-3.5 | byte-level BPE (ranks) | `.tiktoken` |
#
# **Learning goals**
# 1. Load a tokenizer with `labkit.load` and read an `Encoding`: ids, tokens, offsets.
# 2. Recognise the three spellings of a space (`Ġ`, `▁`, none at all) and what each says about the algorithm.
# 3. See how vocabulary size and training data change the number of tokens for the same text.
# 4. Check that labkit's own engines give exactly what the reference libraries
#    (`tokenizers`, `tiktoken`, `sentencepiece`) give.

# %% [markdown]
# ## 1. Loading
#
# `labkit.load(name)` reads the file and builds labkit's own pure-Python engine for it
# (the subject of this book). `engine="hf"`, `"tiktoken"` or `"sentencepiece"` build the
# reference library over the same file instead; `tok.engine` says which one is serving and
# `tok.backend` is the library object behind a reference engine.

# %%
NAMES = ["gpt2", "llama-spm", "qwen2", "bert-bge", "botchan-unigram", "cl100k_base"]
# the reference library used for each file in this notebook: (file, engine); bert-bge is a
# llama.cpp GGUF that no library reads as llama.cpp does, so its reference is the same
# vocabulary's tokenizer.json (minilm) read by tokenizers
REFERENCE = {"gpt2": ("gpt2", "tiktoken"), "llama-spm": ("llama-spm", "sentencepiece"),
             "qwen2": ("qwen2", "tiktoken"), "bert-bge": ("minilm", "hf"),
             "botchan-unigram": ("botchan-unigram", "sentencepiece"), "cl100k_base": ("cl100k_base", "tiktoken")}

toks = {name: labkit.load(name) for name in NAMES}
refs = {name: labkit.load(source, engine=engine) for name, (source, engine) in REFERENCE.items()}

# %% tags=["nbval-ignore-output"]
# which engine serves each file by default (this depends on which engines exist)
for name in NAMES:
    source = "" if REFERENCE[name][0] == name else f" on {REFERENCE[name][0]}'s tokenizer.json"
    print(f"{name:16} default engine: {toks[name].engine:8}  reference: {refs[name].engine:13} {type(refs[name].backend).__name__}{source}")

# %%
import pandas as pd

pd.set_option("display.max_columns", None)
pd.set_option("display.width", 200)
overview = pd.DataFrame(
    [{"name": name, "algorithm": toks[name].vocab.model, "file format": toks[name].vocab.format,
      "vocab size": toks[name].vocab_size} for name in NAMES]
).set_index("name")
overview

# %%
assert overview["vocab size"].to_dict() == {
    "gpt2": 50257, "llama-spm": 32000, "qwen2": 151936, "bert-bge": 30522,
    "botchan-unigram": 1000, "cl100k_base": 100277,
}

# %% [markdown]
# ## 2. One Encoding up close
#
# `encode` returns an `Encoding`: the ids, each token in the model's own spelling, and each
# token's `(start, end)` character offsets into the text. The offsets let us cut the
# original text back out, token by token.

# %%
gpt2 = toks["gpt2"]
enc = gpt2.encode("Hello world, hello!")
for token_id, token, (start, end) in zip(enc.ids, enc.tokens, enc.offsets):
    print(f"{token_id:6}  {token!r:10} {(start, end)}  {'Hello world, hello!'[start:end]!r}")
assert enc.ids == [15496, 995, 11, 23748, 0]
assert gpt2.decode(enc.ids) == "Hello world, hello!"

# %% [markdown]
# Notice `Ġworld`: GPT-2 keeps the space *inside* the next token and spells it `Ġ` (its
# byte map, notebook 01). And `Hello` at the start is a different token (15496) from
# ` hello` after a space (23748): the same word costs different ids depending on what precedes it.

# %% [markdown]
# ## 3. Six tokenizers, one sentence
#
# The same sentence, the tokens of all six side by side (whitespace made visible:
# `·` space, `↵` newline).

# %%
from labkit.viz.spans import visible

SENTENCE = "Hello world! Tokenizers don't agree on 12345 naïve cafés 😀"
encodings = {name: toks[name].encode(SENTENCE) for name in NAMES}


def side_by_side(encodings: dict) -> pd.DataFrame:
    """Position -> (token, id) for each tokenizer; shorter columns padded with blanks."""
    longest = max(len(e.ids) for e in encodings.values())
    columns = {}
    for name, e in encodings.items():
        columns[(name, "token")] = [visible(t) for t in e.tokens] + [""] * (longest - len(e.ids))
        columns[(name, "id")] = [str(i) for i in e.ids] + [""] * (longest - len(e.ids))
    return pd.DataFrame(columns)


side_by_side(encodings)

# %%
counts = {name: len(e.ids) for name, e in encodings.items()}
print(counts)
# the reference libraries count the same
assert counts == {name: len(refs[name].encode(SENTENCE).ids) for name in NAMES}

# %% [markdown]
# Things to notice, each computed below:
# * **Three spellings of a space.** Byte-level BPE (GPT-2, Qwen2, cl100k) writes it `Ġ`,
#   SentencePiece (Llama-2, the Unigram model) writes `▁`, and BERT drops spaces altogether:
#   its pre-tokenizer splits on them and they never become tokens.
# * **BERT lowercases** (`hello`) and strips accents (`naive`, `cafes`); it marks
#   word-internal pieces with `##` (`token ##izer ##s`).
# * **The emoji**: byte-level models spell its four UTF-8 bytes (`ðŁĺĢ`, split or whole),
#   Llama-2 falls back to four `<0xNN>` byte pieces, and BERT and the 1,000-piece Unigram
#   model have no way to write it: `[UNK]` / `<unk>`.
# * **Digits**: Qwen2 cuts `12345` into single digits, cl100k into groups of up to three.

# %%
def spaces(name):
    return sorted({ch for t in encodings[name].tokens for ch in t if ch in "Ġ▁ "})

print({name: spaces(name) for name in NAMES})
assert spaces("gpt2") == spaces("qwen2") == spaces("cl100k_base") == ["Ġ"]
assert spaces("llama-spm") == spaces("botchan-unigram") == ["▁"]
assert spaces("bert-bge") == []
bert_tokens = encodings["bert-bge"].tokens
assert {"hello", "naive", "cafes", "token", "##izer", "##s"} <= set(bert_tokens)
assert "[UNK]" in encodings["bert-bge"].tokens and "<unk>" in encodings["botchan-unigram"].tokens
assert [t for t in encodings["llama-spm"].tokens if t.startswith("<0x")] == ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]
digits = lambda name: [t.strip("Ġ▁") for t in encodings[name].tokens if t.strip("Ġ▁").isdigit()]
print("qwen2:", digits("qwen2"), " cl100k:", digits("cl100k_base"))
assert digits("qwen2") == ["1", "2", "3", "4", "5"] and digits("cl100k_base") == ["123", "45"]

# %% [markdown]
# ### The same, drawn
#
# Each token is a coloured span over the text it came from; hover over a span to see its id
# and spelling. Several tokens over one character (the emoji's bytes) share one span; text no
# token covers (BERT's spaces) is grey.

# %%
from IPython.display import display
from labkit.viz.spans import token_spans

for name in NAMES:
    display(token_spans(toks[name], SENTENCE, title=name))

# %% [markdown]
# ### Framing: BOS, CLS and SEP
#
# `add_special_tokens=True` adds what the model's config asks for: Llama-2 a BOS `<s>`,
# BERT `[CLS] ... [SEP]`, GPT-2 and Qwen2 nothing.

# %%
for name in ["llama-spm", "bert-bge", "gpt2"]:
    print(f"{name:10}", repr(token_spans(toks[name], "Hi there", add_special_tokens=True)))
assert toks["llama-spm"].encode("Hi there", add_special_tokens=True).tokens[0] == "<s>"
framed = toks["bert-bge"].encode("Hi there", add_special_tokens=True).tokens
assert framed[0] == "[CLS]" and framed[-1] == "[SEP]"
assert toks["gpt2"].encode("Hi there", add_special_tokens=True).ids == toks["gpt2"].encode("Hi there").ids

# %% [markdown]
# ### Do we get the text back?
#
# `decode(encode(text))` returns the text exactly for byte-level BPE, and for Llama-2's
# SentencePiece thanks to its byte fallback. The others lose something on the way in:
# case, accents, spacing, characters the vocabulary cannot write, or the exact Unicode form.

# %%
SENTENCES = [
    SENTENCE,
    "Tabs\tand  double  spaces\nand a newline",
    "日本語のテキスト",
    "e\u0301 (decomposed) and é (composed)",
]
round_trip = pd.DataFrame(
    {name: [toks[name].decode(toks[name].encode(s).ids) == s for s in SENTENCES] for name in NAMES},
    index=[visible(s)[:32] for s in SENTENCES],
)
round_trip

# %%
assert round_trip["gpt2"].all() and round_trip["cl100k_base"].all()
assert round_trip["llama-spm"].all()
assert not round_trip["bert-bge"].any() and not round_trip["botchan-unigram"].any()
# Qwen2 normalises to NFC first, so the decomposed é comes back composed
assert round_trip["qwen2"].tolist() == [True, True, True, False]
print(repr(toks["qwen2"].decode(toks["qwen2"].encode("e\u0301").ids)))

# %% [markdown]
# ## 4. Token counts on a whole book
#
# Natsume Sōseki's *Botchan* in English (279 KB). Fewer tokens for the same text means
# more text fits in a context window and generation finishes sooner. The reference engines
# count (they are fast C++/Rust); section 5 checks labkit's own engines against them.

# %%
from labkit.paths import data_path

book = data_path("corpus/botchan.txt").read_bytes().decode("utf-8")
book_counts = {name: len(refs[name].encode(book).ids) for name in NAMES}
table = pd.DataFrame({"tokens": book_counts, "vocab size": {n: toks[n].vocab_size for n in NAMES}})
table["chars per token"] = (len(book) / table["tokens"]).round(2)
table.sort_values("tokens")

# %%
import matplotlib.pyplot as plt

order = table.sort_values("tokens").index
fig, ax = plt.subplots(figsize=(8, 3.5))
bars = ax.barh(list(order), table.loc[order, "tokens"], color="#7aa6d6")
ax.bar_label(bars, labels=[f"{n:,} ({c} chars/token)" for n, c in zip(table.loc[order, "tokens"], table.loc[order, "chars per token"])], padding=3, fontsize=8)
ax.set_xlabel(f"tokens for Botchan ({len(book):,} characters)")
ax.set_xlim(0, table["tokens"].max() * 1.45)
ax.invert_yaxis()
plt.tight_layout()
plt.show()

# %%
print(book_counts)
assert min(book_counts, key=book_counts.get) == "bert-bge"          # lowercased English, no spaces as tokens
assert max(book_counts, key=book_counts.get) == "botchan-unigram"   # only 1,000 pieces
assert book_counts["cl100k_base"] < book_counts["gpt2"] and book_counts["qwen2"] < book_counts["gpt2"]
versus_gpt2 = {name: round(100 * (book_counts[name] / book_counts["gpt2"] - 1), 1) for name in NAMES}
print("tokens compared with GPT-2, in %:", versus_gpt2)
assert -10 < versus_gpt2["cl100k_base"] < -5 and -10 < versus_gpt2["qwen2"] < -5 and versus_gpt2["botchan-unigram"] > 35

# %% [markdown]
# BERT needs the fewest tokens here, but only because it throws information away (case,
# spaces, accents). Among the lossless byte-level models, the 100k-150k vocabularies of
# cl100k and Qwen2 need 8-9% fewer tokens than GPT-2's 50k on this English text (the
# percentages printed above), and the tiny 1,000-piece Unigram model needs over 40% more
# than GPT-2 even though it was trained on this very book.

# %% [markdown]
# ## 5. Do the engines agree?
#
# labkit's engines are pure Python written for this book; the reference libraries are what
# the models actually run. They must give identical ids and tokens, and identical decoded
# text, on every input. Here: the tour's sentences and the first 300 lines of Botchan, both
# with and without special-token parsing. (The test suite goes further: every llama.cpp test
# vector, every line of the book, and randomly generated text.)

# %%
lines = book.split("\n")[:300]
texts = SENTENCES + lines + ["<s>[CLS]<|endoftext|> special spellings </s>"]
report = []
for name in NAMES:
    ours, ref = toks[name], refs[name]
    assert ours.engine == "labkit" and ref.engine != "labkit"
    same_ids = same_decode = 0
    for text in texts:
        for parse_special in (True, False):
            a = ours.encode(text, parse_special=parse_special)
            b = ref.encode(text, parse_special=parse_special)
            assert (a.ids, a.tokens) == (b.ids, b.tokens), (name, text)
            same_ids += 1
        # sentencepiece spells an unknown piece " ⁇ " when decoding: compare texts without one;
        # the bert-bge GGUF decodes as llama.cpp does, not as tokenizers (notebook 04)
        if name != "bert-bge" and (ref.special_tokens.unk_id not in a.ids or ref.engine != "sentencepiece"):
            assert ours.decode(a.ids) == ref.decode(a.ids), (name, text)
            same_decode += 1
    report.append({"name": name, "engine": ours.engine,
                   "compared with": ref.engine + ("" if REFERENCE[name][0] == name else f" ({REFERENCE[name][0]})"),
                   "encodings equal": same_ids, "decodes equal": same_decode})
pd.DataFrame(report).set_index("name")

# %% [markdown]
# Every row above passed its `assert`: for each file, the default engine and the reference
# library produced the same ids and tokens for every encoding counted in the table. bert-bge
# is a GGUF, whose reference is llama.cpp: `tokenizers` reads its arrays otherwise (its own
# Unicode tables, a 100-character word limit), so `engine="hf"` refuses it, and the row
# compares it with the same vocabulary's `tokenizer.json` (minilm) instead. Its decodes are
# not compared: llama.cpp decodes WordPiece its own way (the first word keeps its space;
# notebook 04 shows the difference).

# %% [markdown]
# ## Try it
# Replace each `...` with your answer and run the cell: the checker prints `right`, or `wrong`
# with a hint about what in your answer is off (names may be spelled as you like: "GPT-2"
# counts for `gpt2`). Worked answers are in `solutions/00_tour.ipynb`.

# %%
from labkit.exercises.tour import check_fewest_tokens, check_round_trip, check_token_count, check_tokens

# 1. How many tokens does cl100k_base make of "internationalization"?
check_token_count("cl100k_base", "internationalization", ...)
# 2. Which tokens does Llama-2 (llama-spm) make of " Hello"? (mind the leading space)
check_tokens("llama-spm", " Hello", ...)
# 3. Which of the six needs the fewest tokens for "    indented" (four spaces, then a word)?
check_fewest_tokens("    indented", ...)
# 4. Does BERT (bert-bge) give "hello world" back exactly from its tokens?
check_round_trip("bert-bge", "hello world", ...)

# %% [markdown]
# ## Summary
# * `labkit.load(name)` gives a tokenizer; `encode` returns ids, tokens in the model's own
#   spelling, and character offsets; `decode` goes back.
# * The spelling of a space tells the family: `Ġ` byte-level BPE, `▁` SentencePiece, none for BERT's WordPiece.
# * Byte-level BPE is lossless and never unknown; SentencePiece falls back to bytes (Llama-2) or
#   `<unk>`; BERT lowercases and strips accents.
# * Bigger vocabularies need fewer tokens for the same text, and a lossy tokenizer can look
#   cheap only because it throws text away.
# * labkit's own engines and the reference libraries agree token for token; the next notebooks
#   build each of those engines from the bytes up, starting with UTF-8 and the byte map (01).
