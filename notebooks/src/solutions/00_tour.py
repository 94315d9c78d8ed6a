# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 00 · The tour: worked answers
# Answers to the "Try it" exercises of `00_tour.ipynb`, each worked out with a tokenizer and
# then given to the same checker the exercise uses.

# %%
from labkit.exercises.tour import check_fewest_tokens, check_round_trip, check_token_count, check_tokens

# %% [markdown]
# **1.** Count the ids cl100k_base makes of "internationalization" (a long common word is often
# several tokens even in a 100k vocabulary).

# %%
ids = labkit.load("cl100k_base").encode("internationalization").ids
print(len(ids), labkit.load("cl100k_base").encode("internationalization").tokens)
assert check_token_count("cl100k_base", "internationalization", len(ids))

# %% [markdown]
# **2.** Llama-2's SentencePiece adds a dummy-prefix `▁` *and* turns the leading space into
# another `▁`, so " Hello" starts with a lone `▁` piece.

# %%
tokens = labkit.load("llama-spm").encode(" Hello").tokens
print(tokens)
assert check_tokens("llama-spm", " Hello", tokens)
assert tokens[0] == "▁"

# %% [markdown]
# **3.** Count for each of the six; BERT's basic tokenizer throws the spaces away, byte-level
# vocabularies keep them as tokens.

# %%
names = ["gpt2", "llama-spm", "qwen2", "bert-bge", "botchan-unigram", "cl100k_base"]
counts = {name: len(labkit.load(name).encode("    indented").ids) for name in names}
print(counts)
fewest = min(names, key=counts.get)
assert check_fewest_tokens("    indented", fewest)

# %% [markdown]
# **4.** bert-bge lowercases, and "hello world" is already lower case with single spaces, so it
# comes back exactly with `tokenizers` (the checkers' reference here, reading the same
# vocabulary's tokenizer.json, minilm); "Hello" would not. (labkit's default engine decodes
# this GGUF as llama.cpp does, which keeps the first word's space: `' hello world'`.)

# %%
bert = labkit.load("minilm", engine="hf")
print(repr(bert.decode(bert.encode("hello world").ids)), repr(labkit.load("bert-bge").decode(bert.encode("hello world").ids)))
assert check_round_trip("bert-bge", "hello world", True)
assert check_round_trip("bert-bge", "Hello", False)
