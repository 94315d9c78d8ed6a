# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 02 · Byte-level BPE: pre-tokenize, then merge by rank
#
# GPT-2, GPT-4 (cl100k), Llama-3 and Qwen2 all tokenize the same way: cut the text into
# *pre-tokens* with a regex, spell each pre-token as UTF-8 bytes, then repeatedly merge the
# adjacent pair with the lowest **rank** until no pair has one. This notebook builds that
# from a toy example up to the real vocabularies, and checks labkit's pure-Python engine
# against `tokenizers` and `tiktoken` on every shipped test vector.
#
# **Learning goals**
# 1. Run rank BPE by hand on a word and read its merge trace.
# 2. Compare the pre-tokenizer regexes of GPT-2, Llama-3, Qwen2, GPT-4o, DeepSeek, ... on one text, and say what NFC and `ignore_merges` change.
# 3. Explain why the heap form is O(n log n) while the textbook loop is O(n²), and measure it.
# 4. Train a tiny byte-level BPE and check that it round-trips any text.
# 5. Know where ranks come from: a merges list (GGUF, HF) or token ranks (tiktoken).

# %% [markdown]
# ## 1. Rank BPE by hand
#
# A merges list says which adjacent pairs may join, and in what order of priority (rank 0
# first). Take four merges and the word `lower`:

# %%
from labkit.algorithms import bpe
from labkit.viz.merges import MergeTable, merge_stepper

toy_ranks = {(b"l", b"o"): 0, (b"lo", b"w"): 1, (b"e", b"r"): 2, (b"low", b"er"): 3}
trace = bpe.MergeTrace()
parts = bpe.bpe_naive(bpe.byte_parts(b"lower"), bpe.pair_ranker(toy_ranks), trace=trace)
print(parts)
MergeTable(trace)

# %% [markdown]
# At every step the lowest-rank pair among the *current* neighbours wins; on a tie the
# leftmost pair goes first. That tie rule matters for repeated letters:

# %%
aa = bpe.concat_ranker({b"aa": 0})
print(bpe.bpe_naive(bpe.byte_parts(b"aaaaa"), aa))
assert parts == [b"lower"] and [s.rank for s in trace.steps] == [0, 1, 2, 3]
assert bpe.bpe_naive(bpe.byte_parts(b"aaaaa"), aa) == [b"aa", b"aa", b"a"]

# %% [markdown]
# ## 2. Pre-tokenization: where merges may not cross
#
# BPE never merges across a pre-token boundary, so the pre-tokenizer regex decides a lot:
# whether a word keeps its leading space, how digits are grouped, whether `'ll` stays apart.
# Each `tokenizer.ggml.pre` name in a GGUF file selects a list of regexes (llama.cpp applies
# them in sequence; the text between matches is kept as a piece of its own).

# %%
from labkit.algorithms.pretokenize import get_pre_tokenizer, pretokenize, PRE_TOKENIZERS

text = "Hello world! I've got 1234567 apples, CamelCase\n\n  x"
names = ["gpt-2", "llama3", "qwen2", "gpt-4o", "cl100k", "starcoder", "falcon", "deepseek-coder", "deepseek-llm"]
for name in names:
    print(f"{name:15}", "|".join(pretokenize(text, name)).replace("\n", "\\n"))

# %%
assert " 1234567" in pretokenize(text, "gpt-2")
assert ["123", "456", "7"] == [p for p in pretokenize(text, "llama3") if p.isdigit()]
assert ["1", "2", "3", "4", "5", "6", "7"] == [p for p in pretokenize(text, "qwen2") if p.isdigit()]
assert " Camel" in pretokenize(text, "gpt-4o") and "Case" in pretokenize(text, "gpt-4o")
print(len(PRE_TOKENIZERS), "pre-tokenizer specs;", "llama-bpe ->", get_pre_tokenizer("llama-bpe").name)

# %% [markdown]
# Two per-model switches ride along with the regex:
#
# * **NFC** (Qwen2, MPT, Command-R): `e` + U+0301 is composed to `é` *before* splitting.
#   Without it, the combining accent is not a letter and gets cut off into its own piece.
# * **`ignore_merges`** (Llama-3, and tiktoken always): a pre-token that is itself in the
#   vocabulary is taken whole, without running BPE.

# %%
decomposed = "cafe\u0301 olé"
print("qwen2 (NFC):", pretokenize(decomposed, "qwen2"))
print("llama3     :", pretokenize(decomposed, "llama3"))
assert pretokenize(decomposed, "qwen2")[0] == "café" and "\u0301" in pretokenize(decomposed, "llama3")

# %% [markdown]
# `ignore_merges` on a toy vocabulary where `abc` is a token but no merge builds it
# (`ab` has rank 0, so BPE ends at `ab` + `c`):

# %%
from labkit.core import VocabData, TOKEN_NORMAL
from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.engines.labkit_bpe_byte import ByteLevelBPE

toy_tokens = [bytes_to_gpt2(bytes([b])) for b in range(256)] + ["ab", "bc", "abc"]
toy = VocabData(source="toy", format="mock", model="bpe_byte", tokens=toy_tokens,
                token_types=[TOKEN_NORMAL] * len(toy_tokens), merges=[("a", "b"), ("b", "c")], pre="gpt-2")
plain, whole_first = ByteLevelBPE(toy, pre="gpt-2"), ByteLevelBPE(toy, pre="llama3")
print("merges only   :", plain.encode("abc").tokens)
print("ignore_merges :", whole_first.encode("abc").tokens)
assert plain.encode("abc").tokens == ["ab", "c"] and whole_first.encode("abc").tokens == ["abc"]

# %% [markdown]
# On GPT-2's own vocabulary the switch would change nothing: every one of its tokens is
# exactly what BPE makes from its bytes (checked over the whole vocabulary):

# %%
gpt2 = labkit.load("gpt2")
unreachable = [i for i, b in enumerate(gpt2.id_bytes)
               if gpt2.vocab.token_types[i] != 3 and bpe.bpe_heap(bpe.byte_parts(b), gpt2.rank) != [b]]
print("GPT-2 tokens BPE cannot rebuild from their bytes:", len(unreachable))
assert unreachable == []

# %% [markdown]
# ## 3. A real merge trace
#
# GPT-2's merges list has 50,000 lines; line *i* makes token 256 + *i*. Here is every merge
# BPE makes on the pre-token ` tokenization`, as a table (static) and as a stepper (widget).

# %%
word = " tokenization"
trace = gpt2.merge_trace(word)
table = MergeTable(trace, token_id=gpt2.bytes_id.get)
table

# %% tags=["nbval-ignore-output"]
merge_stepper(trace)

# %%
print(repr(table))
assert gpt2.word_ids(word) == gpt2.encode(word).ids == labkit.load("gpt2", engine="hf").encode(word).ids
assert all(gpt2.bytes_id[s.merged] == 256 + s.rank for s in trace.steps)

# %% [markdown]
# ### The whole algorithm, on the page
#
# Here is rank BPE in a dozen lines, the textbook loop, run on GPT-2's real merges for every
# pre-token of the first 400 lines of botchan, and checked against labkit's engine:

# %%
def rank_bpe(word: bytes, ranks: dict) -> list[bytes]:
    """Merge the lowest-rank adjacent pair (leftmost on a tie) until no pair has a rank."""
    parts = [word[i : i + 1] for i in range(len(word))]
    while len(parts) > 1:
        ranked = [(ranks[pair], i) for i, pair in enumerate(zip(parts, parts[1:])) if pair in ranks]
        if not ranked:
            break
        _, i = min(ranked)  # lowest rank, then lowest position
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


from labkit.bench.harness import corpus_lines

pretokens = [w for line in corpus_lines()[:400] for w in gpt2.pre.split_normalized(line)]
mine = [[gpt2.bytes_id[p] for p in rank_bpe(w.encode(), gpt2.pair_ranks)] for w in pretokens]
assert mine == [gpt2.word_ids(w) for w in pretokens]
print(f"rank_bpe = labkit's engine on all {len(pretokens):,} pre-tokens ({len(set(pretokens)):,} distinct)")

# %% [markdown]
# The engine's fast version gives the same ids and adds three things: a heap of candidate
# pairs over a linked list of parts, so a merge does not rescan the word (§5); for long words
# (24 bytes and more) the same merges over token ids, with one list of positions per merge
# instead of one heap of every pair (`bpe_rank_buckets`, §5); and a word cache, so a pre-token
# seen before costs one dictionary look-up.

# %% [markdown]
# ## 4. Where ranks come from: merges or token ranks
#
# A GGUF or `tokenizer.json` vocabulary stores merges: the rank of pair `(a, b)` is its line
# number. A `.tiktoken` file stores only tokens with ranks (= ids); the rank of a pair is the
# rank of the token `a + b`. For GPT-2 the two agree, because merge *i* makes id 256 + *i*:

# %%
pair_rank = gpt2.pair_ranks
agree = all(gpt2.bytes_id[a + b] == 256 + r for (a, b), r in pair_rank.items())
print("GPT-2: merge i creates id 256 + i for all", len(pair_rank), "merges:", agree)
assert agree
cl100k = labkit.load("cl100k_base")
print("cl100k ranks come from", "merges" if cl100k.pair_ranks else "token ranks", "; GPT-2's from", "merges" if gpt2.pair_ranks else "token ranks")
print(cl100k.encode("Hello world, tokenization!").tokens)

# %% [markdown]
# ## 5. Naive O(n²) vs heap O(n log n)
#
# The textbook loop rescans every adjacent pair after each merge: about n merges × n pairs.
# The heap form keeps candidate pairs in a priority queue keyed (rank, position) over a
# linked list of parts, and skips entries made stale by an earlier merge. Counting rank
# look-ups (deterministic, unlike time) on one long pre-token as it grows:

# %%
def count_lookups(fn, data):
    calls = [0]
    def rank(a, b):
        calls[0] += 1
        return gpt2.rank(a, b)
    fn(bpe.byte_parts(data), rank)
    return calls[0]

sizes = [16, 32, 64, 128, 256, 512, 1024]
long_word = b"tokenization" * 100
costs = [(n, count_lookups(bpe.bpe_naive, long_word[:n]), count_lookups(bpe.bpe_heap, long_word[:n])) for n in sizes]
for n, naive, heap in costs:
    print(f"{n:5} bytes  naive {naive:8}  heap {heap:6}")
assert all(bpe.bpe_naive(bpe.byte_parts(long_word[:n]), gpt2.rank) == bpe.bpe_heap(bpe.byte_parts(long_word[:n]), gpt2.rank) for n in sizes)
# doubling the input roughly quadruples the naive cost but only about doubles the heap's
assert costs[-1][1] / costs[-2][1] > 3.5 and costs[-1][2] / costs[-2][2] < 2.5

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 4))
ax.loglog([c[0] for c in costs], [c[1] for c in costs], "o-", label="naive loop")
ax.loglog([c[0] for c in costs], [c[2] for c in costs], "s-", label="heap + linked list")
ax.set_xlabel("pre-token length (bytes)"); ax.set_ylabel("rank look-ups"); ax.legend()
ax.set_title("BPE cost as one pre-token grows (GPT-2 ranks)")
plt.show()

# %% [markdown]
# The same in wall-clock time (varies run to run):

# %% tags=["nbval-ignore-output"]
import time
for n in (128, 512, 1024):
    data = bpe.byte_parts(long_word[:n])
    times = []
    for fn in (bpe.bpe_naive, bpe.bpe_heap):
        t0 = time.perf_counter(); fn(data, gpt2.rank); times.append(time.perf_counter() - t0)
    print(f"{n:5} bytes  naive {times[0] * 1e3:7.2f} ms  heap {times[1] * 1e3:6.2f} ms")

# %% [markdown]
# In real text most pre-tokens are short words, so the engine's bigger win is the **word
# cache**: a pre-token seen before is looked up, not merged again.

# %% [markdown]
# ### Very long words: merge in chunks, cut only where no merge can join
#
# Text without spaces (a base64 blob, a run of digits, minified code) can be one pre-token of
# a megabyte. The heap is O(n log n), but as the word grows its lists no longer fit in the
# CPU's caches and each merge costs more (the table at the end of this section measures the
# whole-word loop against chunks). So the engine merges such a word in
# chunks of a few thousand parts, and a cut between two chunks is kept only if it provably
# changes nothing. Ranks are time: a part lives from the rank of the merge that made it to
# the rank of the merge that takes it in. The parts facing each other across the cut are
# joined in the whole word if their pair has a rank before one of them is gone; if no such
# pair exists, the two sides never meet and the chunks' ids are the word's ids. A cut that
# fails is undone (the two chunks merge again as one). Here is one cut in 3,000 random
# letters, with the parts on each side over time:

# %%
import random

import pandas as pd

known = {}  # what two ids make, remembered: the loops look here first


def make(a, b):
    """What merging ids a and b makes, packed as the loops want it: (rank << 24) | new id, or -1."""
    left, right = gpt2.id_bytes[a], gpt2.id_bytes[b]
    rank = gpt2.rank(left, right)
    known[(a << 24) | b] = value = -1 if rank is None else (rank << 24) | gpt2.bytes_id[left + right]
    return value


rng = random.Random(7)
letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3000)).encode()
start_ids = [gpt2.bytes_id[bytes([b])] for b in letters]
cut = bpe.likely_token_end(start_ids, 1500, known, make)
left_out, _, left_end = bpe.merge_chunk(start_ids, 0, cut, known, make)
right_out, right_start, _ = bpe.merge_chunk(start_ids, cut, len(start_ids), known, make)


def lifetimes(parts):
    return [(gpt2.id_to_token(i), made, "never" if gone > 1e15 else gone) for i, made, gone in parts]


print("cut at byte", cut)
print("  parts ending at the cut (token, made at rank, gone at rank):", lifetimes(left_end))
print("  parts starting there:                                       ", lifetimes(right_start))
print("  the cut holds:", bpe.cut_holds(left_end, right_start, known, make))
whole = bpe.bpe_rank_buckets(start_ids, known, make)
assert left_out + right_out == whole and bpe.cut_holds(left_end, right_start, known, make)


def _cpu(fn):
    started = time.process_time()
    fn()
    return time.process_time() - started
assert all(bpe.bpe_rank_chunks(start_ids, known, make, chunk=size) == whole for size in (16, 64, 256))

# %% [markdown]
# Each chunk, and a word too short to cut, merges with `bpe_rank_buckets`. A word of
# thousands of bytes has thousands of candidate pairs but only a few hundred distinct merges
# among them (counted below), so the loop keeps one list of positions per merge, keyed by what the merge
# makes (`(rank << 24) | new id`), and a small heap of those keys. The lowest key's positions
# merge left to right; a queued position whose pair has changed since is skipped. The key
# says what every merge in its list makes, so the loop reads it once per list, not once per
# position. SentencePiece BPE needs one list per *rank* instead (`ties=True`): two different
# pieces can share a score, and their pairs then merge left to right among themselves
# (notebook 03). Byte-level ranks never tie, so both keys give the same ids here:

# %%
first_pairs = [make(a, b) for a, b in zip(start_ids, start_ids[1:])]
merging = [value for value in first_pairs if value >= 0]
print(f"{len(start_ids):,} random letters: {len(merging):,} neighbouring pairs that merge, "
      f"{len(set(merging))} distinct merges among them")
assert len(set(merging)) < len(merging) // 4

# %% tags=["nbval-ignore-output"]
by_merge = bpe.bpe_rank_buckets(start_ids, known, make)
by_rank = bpe.bpe_rank_buckets(start_ids, known, make, ties=True)
assert by_merge == by_rank == whole
bucket_ms = {label: 1e3 * min(_cpu(lambda: bpe.bpe_rank_buckets(start_ids, known, make, ties=ties)) for _ in range(5))
             for label, ties in (("one list per merge", False), ("one list per rank", True))}
print(f"{len(start_ids):,} random letters, {len(whole):,} tokens: " +
      ", ".join(f"{label} {ms:.1f} ms" for label, ms in bucket_ms.items()))

# %% [markdown]
# What the chunks buy on long inputs without whitespace (0.1 MB each; CPU seconds per MB,
# best of three, next to tiktoken called directly; `python -m labkit.bench long` measures
# properly, with medians and interleaved rounds):

# %% tags=["nbval-ignore-output"]
from labkit.bench.texts import long_texts

tiktoken_gpt2 = labkit.load("gpt2", engine="tiktoken").backend  # the library itself


def cpu_s_per_mb(fn, text):
    best = min(_cpu(lambda: fn(text)) for _ in range(3))
    return best / (len(text.encode()) / 1e6)


long_rows = {}
for name, text in long_texts(0.1).items():
    start_ids = [gpt2.bytes_id[bytes([b])] for b in text.encode()]
    chunked = bpe.bpe_rank_chunks(start_ids, known, make)  # also fills the memo: both runs below are warm
    assert chunked == bpe.bpe_rank_buckets(start_ids, known, make) == tiktoken_gpt2.encode_ordinary(text)
    long_rows[name] = {
        "whole word": cpu_s_per_mb(lambda t: bpe.bpe_rank_buckets(start_ids, known, make), text),
        "chunks": cpu_s_per_mb(lambda t: bpe.bpe_rank_chunks(start_ids, known, make), text),
        "tiktoken": cpu_s_per_mb(tiktoken_gpt2.encode_ordinary, text),
    }
long_table = pd.DataFrame(long_rows).T
long_table["chunks / tiktoken"] = long_table["chunks"] / long_table["tiktoken"]
long_table.round(3)

# %% [markdown]
# Both runs above are warm in one more way: `known` already held every pair they met. The
# engine keeps such a memo too (what each pair of ids makes, and a table of the 65,536 byte
# pairs), and a tokenizer loaded a moment ago has learnt nothing yet. Its first long word
# asks the rank table about each *distinct* pair it meets, once; every later word, and every
# `clear_cache()` (which empties the word caches only), reads the memo. So
# `python -m labkit.bench long` reports three rows: *first* (a tokenizer loaded just before),
# *cold* (word caches emptied) and *warm*. Counting the questions of a first encode:

# %% tags=["nbval-ignore-output"]
fresh = labkit.load("gpt2", engine="labkit")
asked = []
ask_rank_table = fresh._pair
fresh._pair = lambda a, b: asked.append((a, b)) or ask_rank_table(a, b)
text = long_texts(0.1)["letters"]
first_s = _cpu(lambda: fresh.encode(text))
questions = len(asked)
fresh.clear_cache()
cold_s = _cpu(lambda: fresh.encode(text))
print(f"{len(text):,} letters: first encode {first_s * 1e3:.0f} ms ({questions:,} questions to the rank table), "
      f"after clear_cache {cold_s * 1e3:.0f} ms ({len(asked) - questions} more)")
assert len(asked) == len(set(asked)) == questions  # each pair asked once, and never again

# %% [markdown]
# ## 6. Training a tiny BPE
#
# Training is the other direction: count adjacent pairs inside pre-tokens (weighted by how
# often each pre-token occurs), turn the most frequent pair into a new token, repeat. Ties
# go to the smaller pair so the run is deterministic.

# %%
from labkit.algorithms.bpe_train import train_bpe
from labkit.paths import data_path

lines = data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n")[:1500]
trained = train_bpe(lines, vocab_size=256 + 64)
for s in trained.steps[:12]:
    print(f"{s.new_id}: {bytes_to_gpt2(s.pair[0])!r:8} + {bytes_to_gpt2(s.pair[1])!r:8} -> {bytes_to_gpt2(s.new_token)!r:10} ({s.count} times)")

# %%
tiny = ByteLevelBPE(trained.to_vocab_data())
sample = "\n".join(lines[200:260])
n_bytes, n_tiny, n_gpt2 = len(sample.encode()), len(tiny.encode(sample).ids), len(gpt2.encode(sample).ids)
print(f"{n_bytes} bytes -> {n_tiny} tokens with 64 merges, {n_gpt2} with GPT-2's 50,000")
assert n_gpt2 < n_tiny < n_bytes
# any text round-trips, even text the corpus never had: all 256 bytes are tokens
from labkit.vectors import load_vectors, VECTOR_NAMES
all_inputs = [t for name in VECTOR_NAMES for t, _ in load_vectors(name)]
assert all(tiny.decode(tiny.encode(t).ids) == t for t in all_inputs)

# %% [markdown]
# ## 7. Exactness on every shipped vector
#
# The labkit engine against the llama.cpp `.out` files (made by HF `tokenizers`), against
# the `tokenizers` engine on every vector input of every vocab, and cl100k against `tiktoken`.

# %%
qwen2 = labkit.load("qwen2")
references = {"gpt2": labkit.load("gpt2", engine="hf"), "qwen2": labkit.load("qwen2", engine="hf")}
results = []
for name, tok in (("gpt2", gpt2), ("qwen2", qwen2)):
    vectors = load_vectors(name)
    exact = sum(tok.encode(t, parse_special=False).ids == ids for t, ids in vectors)
    same = sum(tok.encode(t, parse_special=False).ids == references[name].encode(t, parse_special=False).ids for t in all_inputs)
    results.append((name, exact, len(vectors), same, len(all_inputs)))
ref_cl100k = labkit.load("cl100k_base", engine="tiktoken")
same_tk = sum(cl100k.encode(t, parse_special=False).ids == ref_cl100k.encode(t, parse_special=False).ids for t in all_inputs)
for name, exact, n, same, m in results:
    print(f"{name:6} .out vectors {exact}/{n}   = tokenizers on all inputs {same}/{m}")
print(f"cl100k = tiktoken on all inputs {same_tk}/{len(all_inputs)}")
assert all(exact == n and same == m for _, exact, n, same, m in results) and same_tk == len(all_inputs)

# %% [markdown]
# Decoding is exact: each id's bytes are joined and decoded as UTF-8, with U+FFFD for an
# incomplete or invalid sequence, the same as the references.

# %%
ids = gpt2.encode("日本語 😀").ids
prefixes = [gpt2.decode(ids[:k]) for k in range(len(ids) + 1)]
print(prefixes)
assert prefixes == [references["gpt2"].decode(ids[:k]) for k in range(len(ids) + 1)]

# %% [markdown]
# ## 8. Speed: cold and warm word cache
#
# A quick look on a quarter of a MB of botchan (single thread, same run). *Cold* empties the
# word cache before each run, *warm* reuses it. `x tokenizers` is the speed relative to
# `tokenizers` on the same vocab. `python -m labkit.bench bpe` measures properly: CPU time,
# interleaved rounds, three texts, each ratio against labkit's wrapper of tiktoken and
# against tiktoken called directly (notebook 12 quotes those figures).

# %% tags=["nbval-ignore-output"]
from labkit.bench.bpe import measure
from labkit.bench.harness import corpus, table as text_table

rows = measure("gpt2", corpus(0.25), repeat=1) + measure("cl100k_base", corpus(0.25), repeat=1)
print(text_table(rows, ["vocab", "engine", "MB/s", "x tokenizers", "exact"]))

# %% [markdown]
# ## Try it
# Replace each `...` with your answer and run the cell: the checker prints `right`, or
# `wrong` with a hint. Worked answers: `notebooks/solutions/02_bpe_byte_level.ipynb`.
#
# 1. The pre-tokens of `"It's 2025!"` for Llama-3 (pre `"llama3"`). Hint 1: Llama-3 groups
#    digits by three. Hint 2: the space before the digits does not join them.

# %%
from labkit.exercises.bpe import check_pretokens, check_bpe, check_first_merges

answer_1 = ...
check_pretokens("It's 2025!", "llama3", answer_1)

# %% [markdown]
# 2. With ranks `{(b"a", b"b"): 0, (b"b", b"c"): 1, (b"ab", b"c"): 2}`, the parts `b"abcbc"`
#    ends as. Hint 1: after `ab` merges, the pair `(b, c)` at the start no longer exists.
#    Hint 2: your `rank_bpe` above answers it.

# %%
answer_2 = ...
check_bpe(b"abcbc", {(b"a", b"b"): 0, (b"b", b"c"): 1, (b"ab", b"c"): 2}, answer_2)

# %% [markdown]
# 3. The first two merges BPE training learns from `["hug hug hug pug pun"]`. Hint 1: count
#    adjacent byte pairs inside pre-tokens (` hug` keeps its space). Hint 2: after the first
#    merge, count again with the merged pair as one part.

# %%
answer_3 = ...
check_first_merges(["hug hug hug pug pun"], answer_3)

# %% [markdown]
# ## Summary
# * Byte-level BPE = pre-tokenize (a regex list per model, NFC for some) + merge the
#   lowest-rank adjacent pair, leftmost on ties, until none is left.
# * Ranks come from a merges list (line number) or from tiktoken's token ranks (rank of `a+b`);
#   for GPT-2 both views agree. `ignore_merges` takes a known pre-token whole.
# * The whole algorithm fits in a dozen lines (`rank_bpe` above) and gives the engine's ids.
#   The naive loop is O(n²) per pre-token; the heap + linked list is O(n log n); the engine
#   merges long words over ids in buckets by rank, and the word cache makes repeated words free.
# * labkit's pure-Python engine gives the same ids as `tokenizers` and `tiktoken` on every
#   shipped vector, and a trained toy BPE round-trips any text.
