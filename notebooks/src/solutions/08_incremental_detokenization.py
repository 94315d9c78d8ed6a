# %% [markdown]
# # 08 · Worked answers to the "Try it" exercises
#
# The exercises of `notebooks/08_incremental_detokenization.ipynb`, answered and checked.

# %%
import labkit
from labkit.exercises.stream import check_detokenizer, check_split_character, check_utf8_decoder

gpt2 = labkit.load("gpt2")
qwen = labkit.load("qwen2")
llama = labkit.load("llama-spm", engine="sentencepiece")

# %% [markdown]
# ## 1. A character split over GPT-2 ids
#
# GPT-2 has no token for 🫨, so byte-level BPE spells its four bytes with several tokens;
# each alone is an incomplete UTF-8 sequence.

# %%
my_ids = gpt2.encode("🫨").ids
print(my_ids, [gpt2.decode([i]) for i in my_ids])
assert check_split_character(gpt2, my_ids)

# %% [markdown]
# ## 2. A byte-buffer UTF-8 decoder

# %%
class MyUtf8Decoder:
    """Keep an unfinished character's bytes; emit whole characters; U+FFFD for what cannot be one."""

    def __init__(self):
        self.pending = b""

    def step(self, data):
        data = self.pending + data
        keep = 0
        for back in range(1, min(3, len(data)) + 1):  # an unfinished character is at most 3 bytes
            try:
                data[-back:].decode("utf-8")
                break  # the end is whole characters
            except UnicodeDecodeError as error:
                if error.reason == "unexpected end of data" and error.start == 0:
                    keep = back  # a valid start of a character whose last bytes are still to come
                    break
        self.pending = data[len(data) - keep:] if keep else b""
        return data[: len(data) - keep].decode("utf-8", "replace") or None

    def flush(self):
        out, self.pending = self.pending.decode("utf-8", "replace"), b""
        return out or None


assert check_utf8_decoder(MyUtf8Decoder)

# %% [markdown]
# ## 3. A streaming detokenizer: prefix and read offsets

# %%
class MyDetokenizer:
    def __init__(self, tok):
        self.tok, self.ids, self.prefix, self.read = tok, [], 0, 0

    def step(self, token_id):
        self.ids.append(token_id)
        before = self.tok.decode(self.ids[self.prefix:self.read])
        text = self.tok.decode(self.ids[self.prefix:])
        if len(text) > len(before) and not text.endswith("\ufffd"):
            self.prefix, self.read = self.read, len(self.ids)
            return text[len(before):]
        return None

    def flush(self):
        before = self.tok.decode(self.ids[self.prefix:self.read])
        rest = self.tok.decode(self.ids[self.prefix:])[len(before):]
        self.prefix, self.read = self.read, len(self.ids)
        return rest or None


assert check_detokenizer(MyDetokenizer, qwen)
assert check_detokenizer(MyDetokenizer, llama)
