# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 08 · Incremental detokenization: ids in, text out, one id at a time
#
# A model generates one id at a time, and a chat server wants to show the text as it comes.
# Turning a *growing* list of ids into text, piece by piece, sounds like `decode` in a loop.
# It is not: a character can be split over several ids, a SentencePiece space belongs to
# the *next* word, and decoding everything again at every step costs O(N²). Every serving
# stack (TGI, vLLM, `tokenizers`, the SGLang router) ended up with the same small
# algorithm, and several shipped a subtle bug on the way. This notebook rebuilds it.
#
# **Learning goals**
# 1. See, with real ids, why decoding each id alone and decoding everything at each step both fail.
# 2. Hold back an unfinished UTF-8 character (a byte-buffer decoder) and know where that is not enough.
# 3. Trace the window-diff detokenizer token by token, reproduce its U+FFFD bug on the 🫨 of Qwen2, and fix it.
# 4. Use `labkit.DecodeStream` (prefix/read offsets) and `labkit.Sequence`, and check them against `tokenizers`.
# 5. Recognise eleven pitfalls, each shown by a cell, and strip `<think>` blocks from a stream.
#
# The promise every streaming decoder must keep, and that the tests of this package check
# with random ids on every shipped vocabulary and engine:
#
# > the chunks, joined, plus `flush()`, equal `decode(prompt + ids)[len(decode(prompt)):]`,
# > and the work of one step does not grow with the length of the output.

# %%
import time

import matplotlib.pyplot as plt
import pandas as pd

from labkit.streaming.decode_stream import DecodeStream, run_sensitive_byte_ids
from labkit.streaming.naive import FullRedecodeDecoder, PerTokenDecoder
from labkit.streaming.utf8 import Utf8StreamDecoder, byte_token_ids, token_bytes
from labkit.streaming.window_diff import WindowDiffDecoder
from labkit.engines.hf import convert_model_file


def tokenizers_side(name):
    """``tokenizers`` over a bundled file: the hf engine, or for a llama or bert GGUF (which
    engine="hf" refuses: tokenizers does not read them as llama.cpp does) its reading by name."""
    return convert_model_file(name) if name in ("llama-spm", "bert-bge") else labkit.load(name, engine="hf")

pd.set_option("display.max_colwidth", 60)
qwen = labkit.load("qwen2")  # labkit's own byte-level BPE engine
qwen_ref = labkit.load("qwen2", engine="hf")  # the tokenizers reference over the same file
llama = labkit.load("llama-spm", engine="sentencepiece")
print(qwen, qwen_ref, llama, sep="\n")


def stream_chunks(stream, ids):
    """Step every id, then flush; the list of what each call returned (None = held)."""
    return [stream.step(i) for i in ids] + [stream.flush()]


def joined(chunks):
    return "".join(c for c in chunks if c)


# %% [markdown]
# ## 1. A character split over ids: finding 🫨 in the Qwen2 vocabulary
#
# 🫨 (U+1FAE8, "shaking face", Unicode 15) is four bytes in UTF-8. Qwen2's byte-level BPE
# has no token for those four bytes, so the encoder spells it with several tokens, each
# holding *some* of the bytes. We do not type the ids: we ask the encoder, and then check
# the whole vocabulary for a token that would hold the character in one piece.

# %%
shaking = "🫨"
print(shaking.encode("utf-8"))
ids = qwen.encode(" " + shaking).ids
pieces = pd.DataFrame(
    {"id": ids, "token (GPT-2 spelling)": [qwen.id_to_token(i) for i in ids],
     "bytes": [token_bytes(qwen, i) for i in ids], "decoded alone": [repr(qwen.decode([i])) for i in ids]}
)
pieces

# %%
alone_ids = qwen.encode(shaking).ids
print(f"qwen2.encode({shaking}) -> {alone_ids}")
assert alone_ids == [9284, 104, 101]

# %%
whole = [i for i in range(qwen.vocab_size) if shaking.encode() in token_bytes(qwen, i)]
print("tokens whose bytes contain all of 🫨:", whole)
assert whole == [] and len(ids) == 3
assert b"".join(token_bytes(qwen, i) for i in ids) == " 🫨".encode()
assert qwen.decode(ids) == " 🫨" and all("\ufffd" in qwen.decode([i]) for i in ids)

# %% [markdown]
# ## 2. Naive approach 1: decode each id alone
#
# Concatenating `decode([id])` is what a first streaming loop does. Each piece of 🫨 is
# invalid UTF-8 on its own, so each becomes U+FFFD `�` (mojibake). SentencePiece has a second
# problem: a word-initial `▁` is a space only *after* other text, and `decode` of a lone
# piece drops it, so every word loses its space.

# %%
sentence = "I am 🫨 today"
ids_q = qwen.encode(sentence).ids
per_token_q = joined(stream_chunks(PerTokenDecoder(qwen), ids_q))
ids_l = llama.encode("Hello world again").ids
per_token_l = joined(stream_chunks(PerTokenDecoder(llama), ids_l))
print("qwen2 per token :", repr(per_token_q), " decode(all):", repr(qwen.decode(ids_q)))
print("llama per token :", repr(per_token_l), " decode(all):", repr(llama.decode(ids_l)))
print("llama pieces    :", [llama.id_to_token(i) for i in ids_l])
assert per_token_q.count("\ufffd") == 3 and "🫨" not in per_token_q
assert per_token_l == "Helloworldagain" != llama.decode(ids_l)

# %% [markdown]
# ## 3. Naive approach 2: decode everything, every step
#
# Decode all ids so far and emit what goes past the text already emitted (holding while the
# text ends in U+FFFD). This is correct, but step *n* decodes *n* ids: a 10,000-token answer
# decodes 50 million ids in all.

# %%
full = FullRedecodeDecoder(qwen)
reads = []
for i in ids_q:
    before = full.decoded_ids
    full.step(i)
    reads.append(full.decoded_ids - before)
print("ids decoded at each step:", reads)
assert reads == list(range(1, len(ids_q) + 1))
assert joined(stream_chunks(FullRedecodeDecoder(qwen), ids_q)) == qwen.decode(ids_q)
n = 10_000
print(f"{n:,} tokens -> {n * (n + 1) // 2:,} ids decoded in all")

# %% [markdown]
# ## 4. Hold the bytes: a UTF-8 byte-buffer decoder
#
# Below the tokenizer, the fix for split characters is plain UTF-8: the first byte of a
# character says how many bytes follow (`110xxxxx` one more, `1110xxxx` two, `11110xxx`
# three). `Utf8StreamDecoder` keeps an unfinished character's bytes until it is complete,
# emits complete characters at once, and turns a byte that can never be part of a character
# (an orphan continuation byte `10xxxxxx`) into U+FFFD, exactly like Python's
# `bytes.decode("utf-8", "replace")`. This is what llama.cpp does with token pieces.

# %%
decoder = Utf8StreamDecoder()
rows = []
for i in ids:
    data = token_bytes(qwen, i)
    out = decoder.step(data)
    rows.append({"id": i, "bytes in": data, "emitted": repr(out), "held bytes": decoder.pending})
rows.append({"id": "flush", "bytes in": b"", "emitted": repr(decoder.flush()), "held bytes": decoder.pending})
pd.DataFrame(rows)

# %%
orphan = Utf8StreamDecoder()
print([orphan.step(b) for b in (b"a", b"\x80", b"\xe4\xb8", b"b")], orphan.flush())
assert [Utf8StreamDecoder().step(b"\x80")] == ["\ufffd"]
assert b"a\x80\xe4\xb8b".decode("utf-8", "replace") == "a\ufffd\ufffdb"

# %% [markdown]
# It needs the *bytes* of each token, which the `Tokenizer` surface does not give (an
# engine offers `decode`, not bytes), and it knows nothing of the decoder's own rules:
# SentencePiece spaces, WordPiece `##` joins, skipped special tokens. The streaming
# decoders below use only `decode`, on a few ids of context, and diff texts.
#
# ## 5. The window-diff detokenizer, and its bug
#
# Decode the last *K* = 4 ids, and the last *K* - 1; what the first has past the second is
# what the new id adds, in context. While the window text ends in U+FFFD, hold: the id may
# be the start of a character. The trace shows every step on `" I am 🫨 today"`.

# %%
def trace_table(decoder):
    return pd.DataFrame(
        [{"id": r["id"], "window": r["window"], "window text": repr(r["window_text"]),
          "diffed against": repr(r.get("base_text", "")), "emitted": repr(r["emitted"]), "why": r["why"]}
         for r in decoder.trace]
    )


buggy = WindowDiffDecoder(qwen, k=4, fallback=False, record=True)
buggy_chunks = stream_chunks(buggy, ids_q)
trace_table(buggy)

# %% [markdown]
# Look at the step that adds the last piece of 🫨. The window text is `' 🫨'`, but the
# window one id back rendered the first three bytes as one U+FFFD, and U+FFFD is one
# character, just like 🫨. The difference is empty, so nothing is emitted, and the next step
# diffs against a window that already *contains* 🫨. The character never comes out.

# %%
print("chunks:", buggy_chunks)
print("joined:", repr(joined(buggy_chunks)), " decode(all):", repr(qwen.decode(ids_q)))
assert "🫨" not in joined(buggy_chunks) and "🫨" in qwen.decode(ids_q)
# when the character is the very last thing, only flush shows it
only = WindowDiffDecoder(qwen, k=4, fallback=False)
assert [only.step(i) for i in ids] == [None, None, None] and only.flush() == " 🫨"

# %% [markdown]
# **The fix.** When ids were held, diff against the text where the last chunk *ended* (the
# read offset, with K ids of context before it), not against the window one id back.

# %%
fixed = WindowDiffDecoder(qwen, k=4, fallback=True, record=True)
fixed_chunks = stream_chunks(fixed, ids_q)
print("chunks:", fixed_chunks)
assert joined(fixed_chunks) == qwen.decode(ids_q)
trace_table(fixed)

# %% [markdown]
# The tests of this package do not take this example on trust: a hypothesis property
# (`tests/test_streaming_teaching.py`) searches random texts with a character spelled as
# single-byte tokens and *finds* a counterexample for the buggy version by itself, on
# Qwen2, Llama-2 and GPT-2, while the fixed version and `DecodeStream` keep the promise on
# every sequence it tries. The same search, small, right here:

# %%
from hypothesis import find, settings
from hypothesis import strategies as st

byte_ids = byte_token_ids(qwen)
words = st.sampled_from(["", " ok", " a b"]).map(lambda s: list(qwen.encode(s).ids))
split_char = st.sampled_from("🫨é中").map(lambda c: [byte_ids[b] for b in c.encode()])
cases = st.tuples(words, split_char, words).map(lambda t: t[0] + t[1] + t[2])


def keeps_promise(decoder, ids):
    return joined(stream_chunks(decoder, ids)) == qwen.decode(ids)


found = find(cases, lambda ids: not keeps_promise(WindowDiffDecoder(qwen, k=4, fallback=False), ids),
             settings=settings(max_examples=200, derandomize=True, database=None))
print("counterexample:", found, repr(qwen.decode(found)))
assert not keeps_promise(WindowDiffDecoder(qwen, k=4, fallback=False), found)
assert keeps_promise(WindowDiffDecoder(qwen, k=4, fallback=True), found)

# %% [markdown]
# **The window diff as a small server shipped it.** mini_sglang's detokenizer, as the brief
# this book was written from describes it, has the same window diff, a fallback for the lost
# character, and a `flush` that emits "the rest of the last window". (We could not find that
# version's source to link: the public mini-sglang projects we found stream with read and
# surrogate offsets instead.) The cell below is our own code written from that description: the window diff of *K* = 4 ids as above; the fallback,
# when the diff is empty, decodes *all* ids and emits what goes past the text sent so far;
# and `flush` finds where the last window starts in the output by decoding the ids before it,
# and emits the window's text from the first character not yet sent.

# %%
class ShippedWindowDiff:
    """Window diff with an O(N) fallback and a flush that locates the last window by character count."""

    def __init__(self, tok, k=4, fallback=False):
        self.tok, self.k, self.fallback, self.ids, self.sent, self.decoded = tok, k, fallback, [], "", 0

    def _decode(self, ids):
        self.decoded += len(ids)  # the work: ids decoded
        return self.tok.decode(ids)

    def step(self, token_id):
        self.ids.append(token_id)
        window, before = self._decode(self.ids[-self.k:]), self._decode(self.ids[-self.k:-1])
        if window.endswith("\ufffd"):
            return None  # maybe an unfinished character: wait
        new = window[len(before):]
        if not new and self.fallback:  # the lost character: decode everything (O(N) this step)
            new = self._decode(self.ids)[len(self.sent):]
        self.sent += new
        return new or None

    def flush(self):
        window = self._decode(self.ids[-self.k:])
        start = len(self._decode(self.ids[: -self.k]))  # where the window starts, in characters
        rest = window[len(self.sent) - start:]
        self.sent += rest
        return rest or None


shipped = ShippedWindowDiff(qwen)
steps = stream_chunks(shipped, ids_q)
print("chunks:", steps)
print(f"joined: {joined(steps)}    decode(all): {qwen.decode(ids_q)}")
assert steps[-1] == "ay" and joined(steps) == "I am todayay"

# %% [markdown]
# 🫨 is lost in `step` (the bug above), so the text sent is two characters short, `flush`
# lands two characters early in the last window `' 🫨 today'`, and sends `"ay"` again:
# *todayay*. With the fallback on, the lost character comes back, at the price of decoding
# every id so far whenever the diff is empty: below, a Chinese text written as single-byte
# tokens (every character ends with an empty diff), the ids decoded per token grow with the
# position, O(N) per step and O(N²) in all.

# %%
with_fallback = ShippedWindowDiff(qwen, fallback=True)
assert joined(stream_chunks(with_fallback, ids_q)) == qwen.decode(ids_q)
cjk_text = "中文字" * 200
cjk_bytes = [byte_token_ids(qwen)[b] for b in cjk_text.encode()]
work = []
for n_ids in (300, 600, 1200):
    d = ShippedWindowDiff(qwen, fallback=True)
    for i in cjk_bytes[:n_ids]:
        d.step(i)
    work.append({"ids streamed": n_ids, "ids decoded in all": d.decoded, "per id": round(d.decoded / n_ids, 1)})
display(pd.DataFrame(work))
assert work[2]["per id"] > 3 * work[0]["per id"]
s_cjk = labkit.DecodeStream(qwen)
assert "".join(s_cjk.step_batch(cjk_bytes)) + (s_cjk.flush() or "") == cjk_text and s_cjk.max_window <= 8

# %% [markdown]
# The fix is the fallback of `WindowDiffDecoder` above, which diffs from the read offset
# (a few ids of context, never all of them), and that is `DecodeStream`: its widest window
# on the same Chinese bytes is the last assertion.
#
# ## 6. `DecodeStream`: the prefix and read offsets
#
# The fixed window-diff *is* the algorithm TGI, vLLM, `tokenizers` and the SGLang router
# share, written with two offsets into the ids:
#
# ```
# ids:  ... prompt ... | prefix_offset ...... read_offset ...... len(ids)
#                        \___ emitted text __/ \___ new ids ___/
# ```
#
# Each step decodes `ids[prefix_offset:]` and compares it with
# `prefix_text = decode(ids[prefix_offset:read_offset])`. It emits the part past
# `prefix_text` only if the text is longer *and* does not end in U+FFFD; then
# `prefix_offset` moves to the old `read_offset` and `read_offset` to the end. The first
# window starts 5 ids back into the prompt, so the first new word gets its space.
# `labkit.DecodeStream` adds refinements, shown in the pitfalls below: a long held tail
# is settled in bounded pieces, a decoder that re-renders whole byte runs is detected, a run
# is held only up to 64 bytes, and decodes of short windows are remembered.
#
# The algorithm itself, on the page (the package keeps the same loop as
# `labkit.streaming.decode_stream.SimpleDecodeStream`):

# %%
class TextbookDecodeStream:
    """Prefix/read offsets: decode ids[prefix:] and ids[prefix:read], emit the difference."""

    def __init__(self, tok, prompt_ids=()):
        self.tok, self.ids = tok, list(prompt_ids)
        self.prefix = max(0, len(self.ids) - 5)  # 5 ids of the prompt as context
        self.read = len(self.ids)

    def step(self, token_id):
        self.ids.append(token_id)
        prefix_text = self.tok.decode(self.ids[self.prefix:self.read])
        new_text = self.tok.decode(self.ids[self.prefix:])
        if len(new_text) > len(prefix_text) and not new_text.endswith("\ufffd"):
            self.prefix, self.read = self.read, len(self.ids)
            return new_text[len(prefix_text):]
        return None  # nothing new, or an unfinished character: wait

    def flush(self):
        prefix_text = self.tok.decode(self.ids[self.prefix:self.read])
        rest = self.tok.decode(self.ids[self.prefix:])[len(prefix_text):]
        self.prefix, self.read = self.read, len(self.ids)
        return rest or None


from labkit.bench.harness import corpus

corpus_lines = [line for line in corpus(0.01).splitlines() if line.strip()][:25] + [sentence, "Été 🫨 中文 don't ( x ) !"]
agree = []
for tok in (qwen, llama, labkit.load("gpt2"), labkit.load("minilm"), tokenizers_side("llama-spm")):
    same_chunks = 0
    for line in corpus_lines:
        line_ids = tok.encode(line).ids
        cut = len(line_ids) // 3
        mine = stream_chunks(TextbookDecodeStream(tok, line_ids[:cut]), line_ids[cut:])
        theirs = stream_chunks(labkit.DecodeStream(tok, line_ids[:cut]), line_ids[cut:])
        assert joined(mine) == joined(theirs) == tok.decode(line_ids)[len(tok.decode(line_ids[:cut])):]
        same_chunks += mine == theirs
    agree.append({"vocab": tok.name, "engine": tok.engine, "lines": len(corpus_lines), "same text": len(corpus_lines),
                  "same chunks": same_chunks})
assert all(row["same chunks"] == row["lines"] for row in agree[:4]) and agree[4]["same chunks"] < agree[4]["lines"]
pd.DataFrame(agree)

# %% [markdown]
# (BERT here is minilm's `tokenizer.json`. The bert-bge GGUF decodes as llama.cpp does, whose
# `clean_spaces` turns `it ' s` into `it's` once the `s` arrives: the text shrinks behind what a
# stream has already shown, and neither stream here can take it back; a known limit.)
#
# Same text on every line, and the same chunks except on Llama-2 with the hf engine
# (`tokenizers`' ByteFallback decoder), which renders a `<0xNN>` byte run all or nothing: there `DecodeStream` holds a
# newline byte until the run ends (pitfall 6). What the fast version adds is speed and
# bounds: remembered decodes (a window of up to three ids is looked up, not decoded), a fast
# path that emits a byte-level token's own text when nothing is held, a held tail settled in
# bounded pieces (pitfall 5), and byte runs held at most 64 bytes.

# %%
def decode_stream_trace(tok, ids, prompt=()):
    stream = labkit.DecodeStream(tok, prompt)
    rows = []
    for i in ids:
        window = stream.window + [i]
        prefix = stream.prefix_text
        out = stream.step(i)
        rows.append({"id": i, "window (ids[prefix_offset:])": window, "text": repr(tok.decode(window)),
                     "prefix_text": repr(prefix), "emitted": repr(out), "held after": len(stream.held_ids)})
    rows.append({"id": "flush", "window (ids[prefix_offset:])": "", "text": "", "prefix_text": "",
                 "emitted": repr(stream.flush()), "held after": 0})
    return pd.DataFrame(rows)


decode_stream_trace(qwen, ids_q)

# %%
s = labkit.DecodeStream(qwen)
chunks = s.step_batch(ids_q)
tail = s.flush()
print(chunks, tail)
assert "".join(chunks) + (tail or "") == qwen.decode(ids_q)
prompt = qwen.encode("Q: how do you feel?\nA:").ids
answer = qwen.encode(" I am 🫨 today").ids
s = labkit.DecodeStream(qwen, prompt_ids=prompt)
streamed = "".join(s.step_batch(answer)) + (s.flush() or "")
print(repr(streamed))
assert streamed == qwen.decode(prompt + answer)[len(qwen.decode(prompt)):]

# %% [markdown]
# `labkit.Sequence` wraps a stream for a generation loop: the prompt goes in as text,
# generated ids come one at a time, `append_token` returns only the new text, and `text()`
# is always `decode(token_ids)`.

# %%
seq = labkit.Sequence(qwen)
seq.append_text("Q: how do you feel?\nA:")
pieces = [seq.append_token(i) for i in answer]
print(pieces)
print(repr(seq.text()))
assert seq.text() == qwen.decode(seq.token_ids) and "".join(pieces) == " I am 🫨 today"

# %% [markdown]
# ## 7. Checked against `tokenizers.decoders.DecodeStream`
#
# On the ids of every llama.cpp test vector shipped with the vocabularies, labkit's
# `DecodeStream` returns the same value as `tokenizers`' at every step (over `tokenizers`:
# the hf engine, or for the llama and bert GGUFs, which it refuses, `tokenizers`' reading of
# them asked for by name), for GPT-2, Qwen2 and BERT. Llama-2 differs, and only in one way,
# explained in pitfall 6: labkit holds a `<0xNN>` byte piece until the byte run ends.

# %%
from tokenizers.decoders import DecodeStream as ReferenceStream

from labkit.vectors import load_vectors

summary = []
llama_diffs = []
for name in ["gpt2", "qwen2", "bert-bge", "llama-spm"]:
    tok = tokenizers_side(name)
    same = held = 0
    for text, vector_ids in load_vectors(name):
        ours = stream_chunks(labkit.DecodeStream(tok), vector_ids)
        ref = ReferenceStream(skip_special_tokens=False)
        theirs = [ref.step(tok.backend, i) for i in vector_ids] + [None]
        assert joined(ours) == joined(theirs) == tok.decode(vector_ids)
        if ours == theirs:
            same += 1
            continue
        k = next(k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b)
        assert ours[k] is None and vector_ids[k] in run_sensitive_byte_ids(tok)
        held += 1
        llama_diffs.append({"vector": repr(text[:24]), "step": k, "id": vector_ids[k],
                            "token": tok.id_to_token(vector_ids[k]), "labkit": repr(ours[k]), "tokenizers": repr(theirs[k])})
    summary.append({"vocab": name, "vectors": same + held, "identical chunks": same,
                    "differ (byte piece held)": held})
pd.DataFrame(summary)

# %%
assert [row["differ (byte piece held)"] for row in summary[:3]] == [0, 0, 0]
pd.DataFrame(llama_diffs).head(5)

# %% [markdown]
# ## 8. Eleven pitfalls, one cell each
#
# **Pitfall 1: characters split over ids.** Per-token decoding shows U+FFFD for every piece
# (section 2). Byte-level BPE does this to every character its vocabulary lacks, and a
# byte-fallback SentencePiece model to every character outside its pieces: here a rare
# Chinese character (龘, "dragons flying") and runes, in Llama-2 and Qwen2.

# %%
for tok in (llama, qwen):
    for rare in ("龘", "ᚠᛇᚻ"):
        rare_ids = tok.encode(rare).ids
        alone = [tok.decode([i]) for i in rare_ids]
        print(f"{tok.name:28} {rare!r}: {len(rare_ids)} ids, alone: {alone}")
        assert all("\ufffd" in a or a == "" for a in alone) and tok.decode(rare_ids) == rare

# %% [markdown]
# **Pitfall 2: the decoder's own context rules.** A SentencePiece `▁` becomes a space only
# after other text, and a WordPiece `##` piece joins the word before it. A streaming decoder
# must decode each new id *after* some context and diff, never alone.

# %%
bert = labkit.load("minilm", engine="hf")
word_ids = bert.encode("tokenization streams").ids
print([bert.id_to_token(i) for i in word_ids])
print("alone :", [bert.decode([i]) for i in word_ids])
print("stream:", stream_chunks(labkit.DecodeStream(bert), word_ids))
assert joined(stream_chunks(PerTokenDecoder(bert), word_ids)) != bert.decode(word_ids)
assert joined(stream_chunks(labkit.DecodeStream(bert), word_ids)) == bert.decode(word_ids) == "tokenization streams"

# %% [markdown]
# **Pitfall 3: re-decoding everything is O(N²).** Below, the time of *one* step at a
# position, for full re-decode and for `DecodeStream`, up to 100,000 tokens of *Botchan*
# (Qwen2, labkit's engine). The full re-decode step at position *p* decodes *p* ids;
# `DecodeStream` decodes a window of a few ids wherever it is. For a byte-level vocabulary
# it mostly decodes one: when nothing is held and a token's text alone is whole characters,
# that text is exactly what it adds after any window (a probe checks the engine joins
# texts this way), which is why it beats `tokenizers`' own stream in `python -m labkit.bench stream`.

# %%
from labkit.bench.stream import corpus_ids

long_ids = corpus_ids(qwen, 100_000)
positions = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000]
for tok, tok_ids in ((qwen, long_ids), (llama, corpus_ids(llama, 100_000))):
    stream = labkit.DecodeStream(tok)
    stream.max_window = 0
    stream.step_batch(tok_ids)
    print(f"{tok.name:26} widest window a DecodeStream step needed over 100,000 ids: {stream.max_window}")
    assert stream.max_window <= 4
redecode = FullRedecodeDecoder(qwen, long_ids[:49_999])
before = redecode.decoded_ids
redecode.step(long_ids[49_999])
print("ids one full re-decode step decodes at position 50,000:", redecode.decoded_ids - before)
assert redecode.decoded_ids - before == 50_000

# %% tags=["nbval-ignore-output"]
def per_token_seconds_full(p, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        dec = FullRedecodeDecoder(qwen, long_ids[: p - 1])
        t0 = time.perf_counter()
        dec.step(long_ids[p - 1])
        best = min(best, time.perf_counter() - t0)
    return best


def per_token_seconds_stream(width=1_000):
    stream = labkit.DecodeStream(qwen)
    out, done = {}, 0
    for p in positions:
        start = p - width
        stream.step_batch(long_ids[done:start])
        t0 = time.perf_counter()
        stream.step_batch(long_ids[start:p])
        out[p] = (time.perf_counter() - t0) / width
        done = p
    return out


full_times = {p: per_token_seconds_full(p) for p in positions}
stream_times = per_token_seconds_stream()
fig, ax = plt.subplots(figsize=(7, 4))
ax.loglog(positions, [full_times[p] * 1e6 for p in positions], "o-", label="full re-decode (one step)")
ax.loglog(positions, [stream_times[p] * 1e6 for p in positions], "s-", label="DecodeStream (mean step)")
ax.set_xlabel("position of the token in the output")
ax.set_ylabel("time per token (µs)")
ax.set_title("Per-token latency vs position, Qwen2, labkit engine")
ax.legend()
plt.show()
for p in positions:
    print(f"{p:>7,}  full re-decode {full_times[p] * 1e3:8.2f} ms   DecodeStream {stream_times[p] * 1e6:6.2f} µs")

# %% [markdown]
# **Pitfall 4: U+FFFD that turns into a character of the same length.** This is the
# window-diff bug of section 5. It has a cousin in implementations that compare *byte*
# lengths (one was reported in 2026 against the SGLang model gateway's tokenizer): `中` and
# U+FFFD are both three bytes in UTF-8, just as 🫨 and U+FFFD are both one character. A
# length test alone cannot tell "nothing new" from "the held bytes became a character"; the
# diff must be taken against the text where the last chunk ended.

# %%
print(len("中".encode()), len("\ufffd".encode()), len("🫨"), len("\ufffd"))
cjk_split = [byte_ids[b] for b in "中".encode()]
print(stream_chunks(WindowDiffDecoder(qwen, k=4, fallback=False), cjk_split + qwen.encode(" ok").ids))
print(stream_chunks(labkit.DecodeStream(qwen), cjk_split + qwen.encode(" ok").ids))
assert "中" not in joined(stream_chunks(WindowDiffDecoder(qwen, k=4, fallback=False), cjk_split + qwen.encode(" ok").ids))
assert joined(stream_chunks(labkit.DecodeStream(qwen), cjk_split)) == "中"

# %% [markdown]
# **Pitfall 5: a real U+FFFD never "completes".** "Hold while the text ends in U+FFFD"
# assumes the U+FFFD is an unfinished character. Orphan bytes (or the model writing `�`
# itself) make the text end in U+FFFD *for good*: the plain algorithm then holds forever,
# emits nothing, and its window grows with every id, O(N²) again (reported against SGLang's
# detokenizer in 2026, pull request #34852).
# `DecodeStream` settles a held tail longer than 8 ids at a split point that provably cannot
# change any more (the text is exactly the head's plus the tail's, and the tail is longer
# than any unfinished character), so its window stays small.

# %%
def plain_offsets_algorithm(tok, ids):
    """The textbook prefix/read offsets, without a bound on the held tail: returns the widest window."""
    prefix = read = 0
    widest, emitted = 0, []
    for n in range(1, len(ids) + 1):
        widest = max(widest, n - prefix)
        prefix_text, text = tok.decode(ids[prefix:read]), tok.decode(ids[prefix:n])
        if len(text) > len(prefix_text) and not text.endswith("\ufffd"):
            emitted.append(text[len(prefix_text):])
            prefix, read = read, n
    return widest, emitted


orphans = qwen.encode("ok").ids + [byte_ids[0x80]] * 1_000
widest, emitted = plain_offsets_algorithm(qwen, orphans)
s = labkit.DecodeStream(qwen)
s.max_window = 0
chunks = s.step_batch(orphans)
print(f"plain algorithm: widest window {widest} ids, {len(''.join(emitted))} chars emitted before flush")
print(f"DecodeStream:    widest window {s.max_window} ids, {len(''.join(chunks))} chars emitted before flush")
assert widest == len(orphans) and s.max_window <= 24
assert "".join(chunks) + (s.flush() or "") == qwen.decode(orphans)

# %% [markdown]
# **Pitfall 6: engines disagree on invalid UTF-8, and one re-renders the past.** Decoding
# the same bytes gives different text per library. Python, Rust's `from_utf8_lossy`, tiktoken
# and the byte-level engines replace each broken sequence with one U+FFFD; sentencepiece
# itself replaces byte by byte (the last row: the library called directly); and the
# `tokenizers` ByteFallback decoder turns a *whole run* of `<0xNN>` pieces into U+FFFD when any
# byte of it is invalid, so `<0xC3><0xA9>` is `é` but `<0xC3><0xA9><0x80>` is three U+FFFD.
# For a GGUF the reference is llama.cpp, which writes the bytes as they are (read with
# `errors="replace"`, as Python does): labkit's engine and its `sentencepiece` engine decode a
# GGUF that way, and `engine="hf"` refuses the file (its row is `tokenizers`' reading by name).

# %%
cases_bytes = {"C3 A9": b"\xc3\xa9", "C3 A9 80": b"\xc3\xa9\x80", "F0 9F": b"\xf0\x9f", "F0 9F 41": b"\xf0\x9fA"}
rows = []
for name, engine in [("qwen2", "labkit"), ("qwen2", "hf"), ("qwen2", "tiktoken"), ("llama-spm", "labkit"),
                     ("llama-spm", "hf"), ("llama-spm", "sentencepiece")]:
    tok = tokenizers_side(name) if engine == "hf" else labkit.load(name, engine=engine)
    byte_map = byte_token_ids(tok)
    row = {"vocab": name, "engine": "hf (tokenizers' reading)" if tok.engine_note else engine}
    for label, data in cases_bytes.items():
        row[label] = repr(tok.decode([byte_map[b] for b in data]))
    row["re-renders runs"] = bool(run_sensitive_byte_ids(tok))
    rows.append(row)
sentencepiece_itself = labkit.load("llama-spm", engine="sentencepiece")
byte_map = byte_token_ids(sentencepiece_itself)
rows.append({"vocab": "llama-spm", "engine": "sentencepiece itself (.backend)",
             **{label: repr(sentencepiece_itself.backend.decode([byte_map[b] for b in data])) for label, data in cases_bytes.items()}})
engines_table = pd.DataFrame(rows)
engines_table

# %%
assert engines_table["re-renders runs"].tolist()[:6] == [False, False, False, False, True, False]
assert engines_table["F0 9F"].tolist() == ["'\ufffd'"] * 4 + ["'\ufffd\ufffd'", "'\ufffd'", "'\ufffd\ufffd'"]
print("Python:", repr(b"\xc3\xa9\x80".decode("utf-8", "replace")), repr(b"\xf0\x9fA".decode("utf-8", "replace")))

# %% [markdown]
# With such a decoder, text already emitted can become wrong: `tokenizers`' own
# `DecodeStream` emits `é` and then stops with an error when the next byte re-renders it.
# `labkit.DecodeStream` finds the behaviour with a two-decode probe at construction and
# holds a byte run until a piece that is not a byte ends it. That is the one difference
# from `tokenizers` on the Llama-2 vectors in section 7 (a newline `<0x0A>` comes out one
# step later).

# %%
llama_hf = tokenizers_side("llama-spm")
lb = byte_token_ids(llama_hf)
run_ids = llama_hf.encode("Hi").ids + [lb[0xC3], lb[0xA9], lb[0x80]] + llama_hf.encode("ok").ids
ref = ReferenceStream(skip_special_tokens=False)
reference_steps = []
for i in run_ids:
    try:
        reference_steps.append(repr(ref.step(llama_hf.backend, i)))
    except Exception as exc:
        reference_steps.append(type(exc).__name__ + ": " + str(exc).split(".")[0])
pd.DataFrame({"id": run_ids, "token": [llama_hf.id_to_token(i) for i in run_ids],
              "tokenizers DecodeStream": reference_steps,
              "labkit DecodeStream": [repr(c) for c in stream_chunks(labkit.DecodeStream(llama_hf), run_ids)[:-1]]})

# %%
assert reference_steps[2] == "'é'" and "Invalid prefix" in reference_steps[-1]
assert joined(stream_chunks(labkit.DecodeStream(llama_hf), run_ids)) == llama_hf.decode(run_ids)

# %% [markdown]
# Holding a run until it ends has no bound: 1,500 Chinese characters written as byte pieces
# would show nothing until `flush`, and every step would decode the whole run (O(N²)). So
# `DecodeStream` holds a run only up to 64 bytes (`MAX_RUN_BYTES`). Past that, at the next
# character boundary it emits the run's complete characters and carries on as if a new run
# started there; a run that already holds an invalid byte is emitted, and each later byte of
# it is one U+FFFD, as the decoder renders it. That is exact in every case but one, pinned
# below and in `tests/test_streaming_long_runs.py`: a run that is valid for more than 64 bytes
# and *then* gets an invalid byte. `decode(all)` turns the whole run into U+FFFD; the stream
# has already shown the first characters, and cannot take them back.

# %%
from labkit.streaming.decode_stream import MAX_RUN_BYTES

valid_then_bad = [lb[b] for b in ("é" * 35).encode()] + [lb[0x80]]  # 70 valid bytes, then 0x80
long_run = labkit.DecodeStream(llama_hf)
chunks_run = stream_chunks(long_run, valid_then_bad)
first_out = next(k for k, c in enumerate(chunks_run) if c)
streamed_run, whole_run = joined(chunks_run), llama_hf.decode(valid_then_bad)
print(f"bound {MAX_RUN_BYTES} bytes; first text after {first_out + 1} byte pieces; widest window {long_run.max_window}")
print("stream:     ", streamed_run)
print("decode(all):", whole_run)
assert whole_run == "\ufffd" * 71 and streamed_run != whole_run
assert streamed_run.rstrip("\ufffd") == "é" * 33 and first_out + 1 == MAX_RUN_BYTES + 2
cjk_run = [lb[b] for b in ("中文字" * 500).encode()]
cjk_stream = labkit.DecodeStream(llama_hf)
cjk_chunks = stream_chunks(cjk_stream, cjk_run)
print(f"1,500 CJK characters as {len(cjk_run):,} byte pieces: {sum(1 for c in cjk_chunks[:-1] if c)} chunks before flush, "
      f"widest window {cjk_stream.max_window}")
assert joined(cjk_chunks) == "中文字" * 500 and sum(1 for c in cjk_chunks[:-1] if c) >= 50
assert cjk_stream.max_window <= MAX_RUN_BYTES + 4

# %% [markdown]
# **Pitfall 7: the first id after the prompt needs the prompt.** Streaming the answer with
# no context loses the space of its first word (SentencePiece), and a context of skipped
# special tokens is no context at all. `DecodeStream` starts 5 ids back into the prompt, and
# further back when those ids decode to nothing.

# %%
prompt_l = llama.encode("Question: name a colour. Answer:").ids
answer_l = llama.encode("Question: name a colour. Answer: blue sky").ids[len(prompt_l):]
want = llama.decode(prompt_l + answer_l)[len(llama.decode(prompt_l)):]
no_context = joined(stream_chunks(labkit.DecodeStream(llama), answer_l))
with_context = joined(stream_chunks(labkit.DecodeStream(llama, prompt_ids=prompt_l), answer_l))
print(repr(no_context), repr(with_context), repr(want))
assert no_context != want and with_context == want
eos = llama.special_tokens.eos_id
blind = prompt_l + [eos] * 6
s = labkit.DecodeStream(llama, prompt_ids=blind, skip_special_tokens=True)
got = joined(stream_chunks(s, answer_l))
print(repr(got), repr(llama.decode(blind + answer_l, skip_special_tokens=True)[len(llama.decode(blind, skip_special_tokens=True)):]))
assert got == want

# %% [markdown]
# **Pitfall 8: `skip_special_tokens` mid-stream.** A special token in the middle of the
# output (an `<|im_end|>` a model writes and keeps going, a `<s>` of a sampler's glue) is
# removed by `skip_special_tokens`, but not without a trace: a SentencePiece decoder treats
# it as a boundary, and a bare `▁` before it reads as nothing until text follows. Llama-2
# ids `[29871] + [1] * 8 + [664]` (`▁`, eight `<s>`, `▁work`) decode to `' work'`; a stream
# that settles the long silent tail by dropping it loses the space (labkit did, before the
# regression test `tests/test_streaming_skip_specials.py`). Per-token decoding loses it too.

# %%
silent_case = [29871] + [1] * 8 + [664]
for engine in ("labkit", "hf", "sentencepiece"):
    tok = tokenizers_side("llama-spm") if engine == "hf" else labkit.load("llama-spm", engine=engine)
    want = tok.decode(silent_case, skip_special_tokens=True)
    got = joined(stream_chunks(labkit.DecodeStream(tok, skip_special_tokens=True), silent_case))
    alone = joined(stream_chunks(PerTokenDecoder(tok, skip_special_tokens=True), silent_case))
    print(f"{engine:14} decode: {want!r}  DecodeStream: {got!r}  per token: {alone!r}")
    assert got == want == " work" and alone != want
mid = qwen.encode("Yes.<|im_end|> And more").ids
mid_stream = joined(stream_chunks(labkit.DecodeStream(qwen, skip_special_tokens=True), mid))
assert mid_stream == qwen.decode(mid, skip_special_tokens=True) == "Yes. And more"

# %% [markdown]
# **Pitfall 9: `clean_up_tokenization_spaces` on chunks.** `transformers` can post-process a
# whole decode by removing a space before punctuation and contractions (`" ."` -> `"."`,
# `" n't"` -> `"n't"`, ...). Applied per chunk it gives a different text than applied to the
# whole, because the space and the punctuation arrive in different chunks. (`tokenizers`'
# WordPiece decoder already applies such rules token by token, which is why `,` and `?` come
# out without a space below; labkit's `decode` follows the tokenizer file's decoder and never
# adds the `transformers` option.) A server that offers it must apply it to the joined text,
# never to chunks. The rules below are the `transformers` list, written out.

# %%
CLEANUP = [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
           (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]


def clean_up(text):
    for before, after in CLEANUP:
        text = text.replace(before, after)
    return text


bert_ids = bert.encode("it is n't so , is it ?").ids
bert_chunks = [c for c in stream_chunks(labkit.DecodeStream(bert), bert_ids) if c]
per_chunk = "".join(clean_up(c) for c in bert_chunks)
print("chunks          :", bert_chunks)
print("cleaned per chunk:", repr(per_chunk))
print("cleaned whole    :", repr(clean_up("".join(bert_chunks))))
assert per_chunk != clean_up("".join(bert_chunks)) and "".join(bert_chunks) == bert.decode(bert_ids)

# %% [markdown]
# **Pitfall 10: a character count used as a token index.** The text shown so far and the ids
# generated so far have different lengths, and neither counts the other: 🫨 is one character
# and three ids, `" today"` is six characters and one id. Code that resumes a stream at
# `ids[len(text_sent):]` (or truncates ids by a character budget) lands in the wrong place.

# %%
sent_text = "I am 🫨"
sent_ids = qwen.encode(sent_text).ids
print(f"{len(sent_text)} characters, {len(sent_text.encode())} bytes, {len(sent_ids)} ids")
wrong_resume = ids_q[len(sent_text):]
print("resumed at ids[len(text)]:", repr(qwen.decode(wrong_resume)), " should be:", repr(qwen.decode(ids_q[len(sent_ids):])))
assert qwen.decode(wrong_resume) != qwen.decode(ids_q)[len(sent_text):]

# %% [markdown]
# **Pitfall 11: where the detokenizer sits in the server.** The scheduler produces one id
# per request per step; the detokenizer turns each request's ids into text and must keep
# *one stream state per request* (offsets, held ids), created with that request's prompt and
# dropped when it finishes. Stop strings are matched on its *output* (notebook 09), so the
# stop checker sits after it, and `<think>` stripping (below) after that. One shared stream
# fed by two interleaved requests mixes their contexts:

# %%
requests = {"a": qwen.encode(" I am 🫨 today").ids, "b": qwen.encode(" 中文 ok").ids}
per_request = {name: labkit.DecodeStream(qwen) for name in requests}
shared = labkit.DecodeStream(qwen)
out_per, out_shared = {"a": "", "b": ""}, {"a": "", "b": ""}
for step_index in range(max(map(len, requests.values()))):
    for name, req_ids in requests.items():  # the scheduler's order: one id per request per step
        if step_index < len(req_ids):
            out_per[name] += per_request[name].step(req_ids[step_index]) or ""
            out_shared[name] += shared.step(req_ids[step_index]) or ""
for name in requests:
    out_per[name] += per_request[name].flush() or ""
print("one state per request:", out_per)
print("one shared state     :", out_shared)
assert out_per == {name: qwen.decode(req_ids) for name, req_ids in requests.items()} != out_shared

# %% [markdown]
# ## 9. Stripping `<think>` blocks from a stream
#
# Reasoning models write `<think> ... </think>` before the answer. On a stream the tags
# arrive cut anywhere. `ThinkStripper` is a two-state machine that holds back only a tail
# that could still become the tag it waits for; any other `<` goes out as soon as it cannot
# be one. An unterminated block at the end is reasoning, never shown as the answer.

# %%
from labkit.streaming.think import ThinkStripper, strip_think

text = "<think>The user wants 2 < 3 checked.</think>Yes: 2 < 3 and <b>bold</b> stays."
for cut in (1, 3, 7):
    stripper = ThinkStripper()
    parts = [text[k:k + cut] for k in range(0, len(text), cut)]
    shown = "".join(stripper.step(p) for p in parts) + stripper.flush()
    print(f"chunks of {cut}: {shown!r}  reasoning: {stripper.reasoning!r}")
    assert shown == strip_think(text) == "Yes: 2 < 3 and <b>bold</b> stays."
unfinished = ThinkStripper()
print(repr(unfinished.step("Sure. <think>still think")), repr(unfinished.flush()), unfinished.unterminated)
assert unfinished.unterminated and unfinished.reasoning == "still think"

# %% [markdown]
# Streamed from ids, the stripper sits after `DecodeStream`: ids -> text chunks -> visible text.

# %%
think_ids = qwen.encode("<think>hmm 🫨</think>Answer: 42").ids
stripper = ThinkStripper()
chunks = labkit.DecodeStream(qwen).step_batch(think_ids)
visible = [stripper.step(c) for c in chunks] + [stripper.flush()]
print("text chunks   :", chunks)
print("visible chunks:", [v for v in visible if v])
assert "".join(visible) == "Answer: 42" and stripper.reasoning == "hmm 🫨"

# %% [markdown]
# ## Try it
#
# Each checker prints `right` or `wrong` (saying which part is wrong); while an answer is
# still `None` it prints `not answered yet`. Worked answers are in
# `notebooks/solutions/08_incremental_detokenization.ipynb`.
#
# 1. Find ids of the GPT-2 vocabulary that decode to clean text together but to U+FFFD
#    alone. Hint 1: what does GPT-2 do with a character it has no token for?
#    Hint 2: `gpt2.encode(...)` of an emoji.
# 2. Write a byte-buffer UTF-8 decoder class with `step(bytes)` and `flush()`; the checker
#    cuts tricky byte strings every possible way and compares with Python.
#    Hint 1: the lead byte says how many bytes follow. Hint 2: a byte that breaks a sequence
#    ends it with one U+FFFD and is then read again as the start of a new one.
# 3. Write your own streaming detokenizer (`make(tok)` returns an object with `step(id)` and
#    `flush()`) and check it on Qwen2 and Llama-2, including the U+FFFD cases.
#    Hint 1: never decode an id alone (spaces, `##`). Hint 2: hold while the text ends in
#    U+FFFD, and diff from where the last chunk ended, not from one id back.

# %%
from labkit.exercises.stream import check_detokenizer, check_split_character, check_utf8_decoder

gpt2 = labkit.load("gpt2")
my_ids = None  # 1. a list of GPT-2 ids
MyUtf8Decoder = None  # 2. a class: MyUtf8Decoder().step(b"...") / .flush()
make_my_detokenizer = None  # 3. a function: make_my_detokenizer(tok) -> an object with step(id), flush()
check_split_character(gpt2, my_ids)
check_utf8_decoder(MyUtf8Decoder)
check_detokenizer(make_my_detokenizer, qwen)
check_detokenizer(make_my_detokenizer, llama)

# %% [markdown]
# ## Summary
#
# * Decoding each id alone breaks split characters and SentencePiece spaces; decoding
#   everything each step is right but O(N²).
# * A UTF-8 byte buffer fixes split characters below the tokenizer, when bytes are known.
# * The window diff decodes a few ids of context and diffs; without its fallback, a
#   character whose first bytes were held as U+FFFD is lost (🫨 in Qwen2).
# * `labkit.DecodeStream` is the prefix/read offset algorithm of TGI, vLLM, `tokenizers`
#   and the SGLang router, with a bounded held tail and a probe for decoders that re-render
#   byte runs; it equals `tokenizers`' chunks on the vectors except where that matters.
# * Eleven pitfalls: split characters, context rules, O(N²), same-length U+FFFD, a real
#   U+FFFD, engines that disagree on invalid UTF-8 (and runs held at most 64 bytes), the
#   prompt as context, `skip_special_tokens` mid-stream, `clean_up_tokenization_spaces` on
#   chunks, a character count used as a token index, and one stream state per request.
