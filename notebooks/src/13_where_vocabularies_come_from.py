# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 13 · Where vocabularies come from: BPE, WordPiece and Unigram trained side by side
#
# Every notebook so far *read* a vocabulary. This one *makes* them: the same small corpus
# (*Botchan*) goes through three trainers, and the vocabularies come out different because
# each trainer asks a different question.
#
# * **BPE** merges the most *frequent* adjacent pair, again and again.
# * **WordPiece** merges the pair with the highest score `count(ab) / (count(a)·count(b))`:
#   the pair that is most surprising given its parts.
# * **Unigram** starts from far too many pieces and *removes* the ones the corpus misses
#   least, with EM over each word's lattice in between.
#
# Then the lattice is used the other way round: instead of the best segmentation, a
# *random* one (subword regularisation), and BPE's counterpart, BPE-dropout.
#
# **Learning goals**
# 1. Train a Unigram vocabulary the way sentencepiece does (seed, EM, pruning) and check it
#    against sentencepiece's own trainer.
# 2. Say why the WordPiece pair score and `tokenizers`' WordPiece trainer disagree.
# 3. Compare three vocabularies on held-out text: shared pieces, tokens per word, compression.
# 4. Draw segmentations from a Unigram lattice and from BPE with dropout, and check the
#    draws against the exact distribution.

# %% [markdown]
# ## 1. One corpus, three trainers
#
# The first 2,500 lines of *Botchan* train; the other 1,788 are held out. Each trainer gets a
# budget of 1,000 tokens.

# %%
import time

from labkit.algorithms.bpe_train import train_bpe
from labkit.training.unigram_train import UnigramTrainer
from labkit.algorithms.wordpiece_train import train_wordpiece
from labkit.paths import data_path

lines = data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n")
train_lines, held_out = lines[:2500], [line for line in lines[2500:] if line.strip()]
VOCAB = 1000

started = time.process_time()
bpe = train_bpe(train_lines, VOCAB)
bpe_seconds = time.process_time() - started
wordpiece = train_wordpiece(train_lines, VOCAB)
unigram_trainer = UnigramTrainer(VOCAB)
unigram = unigram_trainer.train(train_lines)
print(f"{len(train_lines)} training lines, {len(held_out)} held-out lines")
print(f"BPE {len(bpe.vocab)} tokens, WordPiece {len(wordpiece.tokens)}, Unigram {len(unigram.pieces)}")

# %% tags=["nbval-ignore-output"]
print(f"CPU seconds: BPE {bpe_seconds:.1f}, WordPiece {wordpiece.seconds:.1f}, Unigram {unigram.seconds:.1f}")

# %% [markdown]
# The three spell pieces differently: BPE works on bytes and a word-initial token carries
# its space (`' the'`), WordPiece marks continuations with `##`, Unigram marks word starts
# with `▁`. To compare them, each piece becomes *(starts a word?, text)*. A byte-level BPE
# token that is not whole UTF-8, and the special tokens, are left out.

# %%
import pandas as pd


def bpe_form(token: bytes):
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return (True, text[1:]) if text.startswith(" ") and len(text) > 1 else (False, text)


def wordpiece_form(token: str):
    if token.startswith("[") and token.endswith("]"):
        return None
    return (False, token[2:]) if token.startswith("##") else (True, token)


def unigram_form(piece: str):
    if piece in ("<unk>", "<s>", "</s>"):
        return None
    return (True, piece[1:]) if piece.startswith("▁") else (False, piece)


forms = {
    "BPE": {f for f in map(bpe_form, bpe.vocab.values()) if f},
    "WordPiece": {f for f in map(wordpiece_form, wordpiece.tokens) if f},
    "Unigram": {f for f in map(unigram_form, unigram.pieces) if f},
}
names = list(forms)
pd.DataFrame([[len(forms[a] & forms[b]) for b in names] for a in names], index=names, columns=names)

# %% [markdown]
# The longest word-initial pieces each trainer found say a lot about its question:

# %%
for name in names:
    longest = sorted((text for start, text in forms[name] if start), key=lambda t: (-len(t), t))[:8]
    print(f"{name:10} {longest}")

# %% [markdown]
# WordPiece's pair score rewards pairs whose parts are rare on their own: the digits of
# Project Gutenberg's licence numbers and the letters of rare names glue together before
# common words do. BPE and Unigram spend their budget on frequent words and endings.

# %%
numbers = {name: sum(1 for _, text in forms[name] if any(ch.isdigit() for ch in text)) for name in names}
print("pieces holding a digit:", numbers)
assert numbers["WordPiece"] > 3 * max(numbers["BPE"], numbers["Unigram"])

# %% [markdown]
# ## 2. On held-out text: tokens per word and compression
#
# Each vocabulary encodes the held-out lines with its own algorithm: byte-level BPE
# through labkit's engine, WordPiece by greedy longest match, Unigram by Viterbi.

# %%
from labkit.training.unigram_train import default_normalizer
from labkit.algorithms.wordpiece import WordPiece
from labkit.algorithms.wordpiece_train import bert_words
from labkit.engines.labkit_bpe_byte import build as build_bpe

bpe_engine = build_bpe(bpe.to_vocab_data())
wordpiece_model = WordPiece(wordpiece.vocab())
unigram_model = unigram.model()
normalize = default_normalizer().normalize

encoders = {
    "BPE": lambda line: bpe_engine.encode_ordinary(line),
    "WordPiece": lambda line: [p for word in bert_words(line) for p in wordpiece_model.tokenize(word)],
    "Unigram": lambda line: unigram_model.encode(normalize(line)),
}
words = sum(len(line.split()) for line in held_out)
utf8_bytes = sum(len(line.encode("utf-8")) for line in held_out)
rows = []
for name, encode in encoders.items():
    tokens = sum(len(encode(line)) for line in held_out)
    rows.append({"trainer": name, "tokens": tokens, "tokens per word": round(tokens / words, 3),
                 "bytes per token": round(utf8_bytes / tokens, 3)})
held_out_table = pd.DataFrame(rows).set_index("trainer")
held_out_table

# %%
per_word = held_out_table["tokens per word"]
assert per_word["WordPiece"] > per_word["BPE"] and per_word["WordPiece"] > per_word["Unigram"]
print(f"WordPiece needs {per_word['WordPiece'] / per_word['Unigram']:.2f}x the tokens Unigram needs")

# %% [markdown]
# With the same budget, the pair score pays for its rare pieces on ordinary words.
# (BPE's 1,000 tokens include the 256 single bytes, most of them unused by English text.)

# %% [markdown]
# ## 3. Unigram step by step, against sentencepiece's trainer
#
# labkit's trainer follows sentencepiece 0.2.3 (`unigram_model_trainer.cc`) with its
# defaults. The training log records each step:
#
# * **seed**: every character plus the substrings a suffix array marks as internal nodes
#   (they occur twice or more, not always followed by the same byte), at most 16
#   characters, `▁` only first, one script; scored `count × length`.
# * **em**: an E-step (forward-backward over each distinct word's lattice gives expected
#   piece counts) and an M-step (drop pieces expected under 0.5 times; score
#   `digamma(count) - digamma(total)`); two per round.
# * **prune**: keep the 75% (`shrinking_factor`) of pieces whose removal would cost the
#   corpus the most likelihood, until 1.1 × the vocabulary size is left.
# * **final**: pieces Viterbi can never choose go, the required characters (99.95%
#   `character_coverage`) are kept, and the best-scored pieces fill the vocabulary.

# %%
log = pd.DataFrame([vars(step) for step in unigram.log])
log

# %%
import matplotlib.pyplot as plt

em = log[log.kind == "em"].reset_index(drop=True)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.2))
left.plot(em.index, em.objective, marker="o")
left.set_xlabel("EM step")
left.set_ylabel("-log likelihood per word")
left.set_title("EM objective")
right.plot(range(len(log)), log["size"], marker="o", color="tab:orange")
right.set_yscale("log")
right.set_xticks(range(len(log)), log.kind, rotation=60, fontsize=7)
right.set_ylabel("pieces")
right.set_title("vocabulary size")
fig.tight_layout()
plt.show()

# %% [markdown]
# The objective falls within each round (EM improves the fit) and jumps up after each
# pruning (fewer pieces explain the corpus less well); the size shrinks by a quarter per round.

# %%
assert all(em.objective[i + 1] < em.objective[i] for i in range(0, len(em) - 1, 2))
assert all(em.objective[i + 1] > em.objective[i] for i in range(1, len(em) - 1, 2))
sizes_before = [log["size"][i - 1] for i in log.index if log.kind[i] == "prune"]
sizes_after = [log["size"][i] for i in log.index if log.kind[i] == "prune"]
assert sizes_after == [max(int(0.75 * before), int(1.1 * VOCAB)) for before in sizes_before]

# %% [markdown]
# Now sentencepiece's trainer on the same lines with its default options:

# %%
import io

import sentencepiece as spm

model_file = io.BytesIO()
spm.SentencePieceTrainer.train(sentence_iterator=iter(train_lines), model_writer=model_file,
                               vocab_size=VOCAB, model_type="unigram", minloglevel=2)
reference = spm.SentencePieceProcessor(model_proto=model_file.getvalue())
reference_pieces = [reference.id_to_piece(i) for i in range(reference.get_piece_size())]
reference_scores = [reference.get_score(i) for i in range(reference.get_piece_size())]
same_ids = sum(a == b for a, b in zip(reference_pieces, unigram.pieces))
same_scores = sum(a == b for a, b in zip(reference_scores, unigram.scores))
print(f"same piece at the same id: {same_ids} of {VOCAB}; same float score: {same_scores} of {VOCAB}")
assert unigram.pieces == reference_pieces and unigram.scores == reference_scores

# %% [markdown]
# Bit for bit the same vocabulary: every piece at the same id with the same float score.
# That takes copying sentencepiece's arithmetic, not just its algorithm. Its E-step adds
# log probabilities in 32-bit floats and splits the words over 16 threads, each adding its
# expected counts into its own float accumulator (word *i* goes to thread *i* mod 16),
# then adds the 16 accumulators in order. labkit's default (`float32_em=True`) does the
# same (`float32_em=True`). Here is what the float arithmetic changes in one E-step on the
# seed model, against the same E-step in doubles (`float32_em=False`, about twice as fast):

# %%
probe = UnigramTrainer(VOCAB)
seed_model = probe.prepare(train_lines)
in_floats, _, _ = probe.e_step_float32(*seed_model)
in_doubles, _, _ = probe.e_step_doubles(*seed_model)
relative = [abs(f - d) / d for f, d in zip(in_floats, in_doubles) if d > 0.5]
print(f"{len(seed_model[0]):,} seed pieces; expected counts differ by up to {max(relative):.1e} (relative), "
      f"median {sorted(relative)[len(relative) // 2]:.1e}")
assert 0 < max(relative) < 1e-4

# %% [markdown]
# Differences of a few parts in ten million, but scores are compared for ties, and a tie
# can decide which pieces make the final cut: trained on the whole book at 1,000 pieces, the doubles
# keep `▁grabbe` and `▁window` where sentencepiece keeps `▁borrow` and `▁garden` (four
# pieces that share one float score in sentencepiece's model; the tie goes by string
# order). The float E-step reproduces sentencepiece there too, and at 4,000 pieces; both
# are measured in `tests/test_training_unigram.py`.

# %% [markdown]
# ## 4. WordPiece: the pair score, and what `tokenizers` does instead
#
# `tokenizers`' `WordPieceTrainer` does not use the pair score: it trains BPE (most
# frequent pair) with `##` continuations and keeps BPE's vocabulary. labkit's
# `score="frequency"` does the same, which makes the difference visible:

# %% tags=["nbval-ignore-output"]
# (output varies: tokenizers breaks ties differently from one process to the next, see below)
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

hf = Tokenizer(models.WordPiece(unk_token="[UNK]"))
hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
hf.train_from_iterator(train_lines, trainers.WordPieceTrainer(vocab_size=VOCAB, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
hf_vocab = set(hf.get_vocab())
by_frequency = train_wordpiece(train_lines, VOCAB, score="frequency")
print("tokenizers vs labkit pair score:   ", len(hf_vocab & set(wordpiece.tokens)), "shared")
print("tokenizers vs labkit by frequency: ", len(hf_vocab & set(by_frequency.tokens)), "shared")
assert len(hf_vocab & set(by_frequency.tokens)) >= VOCAB - 8  # measured: 1000 in 4 of 6 processes, 996 in 2
assert len(hf_vocab & set(wordpiece.tokens)) < VOCAB / 3

# %% [markdown]
# The first merges of each make the reason plain:

# %%
pd.DataFrame({
    "pair score": [f"{m.left} + {m.right} ({m.score:.2g})" for m in wordpiece.merges[:8]],
    "frequency (tokenizers)": [f"{m.left} + {m.right} ({m.count})" for m in by_frequency.merges[:8]],
})

# %% [markdown]
# The frequency variant and `tokenizers` agree on every piece in most runs; in some runs
# a few pieces differ. Those are ties between pairs of equal count: `tokenizers` breaks them
# by its token ids, and it numbers the `##` characters in its hash map's order, which
# changes from one process to the next (measured in `tests/test_training_wordpiece.py`).

# %% [markdown]
# ## 5. Subword regularisation: sampling the lattice
#
# Kudo (2018) trains models on *random* segmentations so they learn that `▁sch|ool` and
# `▁school` are the same word. A segmentation is drawn with probability proportional to
# `exp(alpha · score)`: forward sums over the lattice, then pieces chosen from the end back
# (forward-filtering backward-sampling). Small `alpha` flattens the distribution, large
# `alpha` sharpens it towards the Viterbi path.

# %%
from labkit.training.unigram_sampling import UnigramSampler

sampler = UnigramSampler(unigram_model, normalize)
sentence = "I had no idea what to do with the money."
rows = []
for alpha in (0.05, 0.2, 1.0):
    for draw, ids in enumerate(sampler.sample_many(sentence, alpha, 3, seed=int(alpha * 100))):
        rows.append({"alpha": alpha, "draw": draw, "tokens": len(ids),
                     "segmentation": " ".join(unigram_model.pieces[i] for i in ids)})
rows.append({"alpha": "Viterbi", "draw": "", "tokens": len(unigram_model.encode(normalize(sentence))),
             "segmentation": " ".join(unigram_model.encode_pieces(normalize(sentence)))})
pd.set_option("display.max_colwidth", 120)
pd.DataFrame(rows)

# %% [markdown]
# The `k` best segmentations come from an A* search over the same lattice (sentencepiece's
# `nbest_encode_as_ids`; labkit's equals it on every *Botchan* line, scores included):

# %%
for ids, score in sampler.nbest("the school", 4):
    print(f"{score:9.4f}  {' '.join(unigram_model.pieces[i] for i in ids)}")

# %% [markdown]
# Are the draws right? For a short string every segmentation can be listed with its exact
# probability, and 20,000 draws compared with it (chi-square). The same check runs against
# sentencepiece's `sample_encode_as_ids` in `tests/test_training_sampling.py`.

# %%
from collections import Counter

from labkit.algorithms.chi_square import chi_square

word, alpha = "school", 0.5
exact = sampler.distribution(word, alpha)
draws = Counter(map(tuple, sampler.sample_many(word, alpha, 20_000, seed=1)))
test = chi_square(draws, exact)
top = sorted(exact, key=exact.get, reverse=True)[:8]
labels = [" ".join(unigram_model.pieces[i] for i in key) for key in top]
fig, ax = plt.subplots(figsize=(9, 3))
ax.bar([i - 0.2 for i in range(len(top))], [exact[k] for k in top], width=0.4, label="exact")
ax.bar([i + 0.2 for i in range(len(top))], [draws[k] / 20_000 for k in top], width=0.4, label="20,000 draws")
ax.set_xticks(range(len(top)), labels, rotation=30, fontsize=8)
ax.set_ylabel("probability")
ax.set_title(f"{word!r} at alpha={alpha}: {len(exact)} segmentations, chi-square p = {test.p_value:.2f}")
ax.legend()
fig.tight_layout()
plt.show()
assert test.p_value > 0.01

# %% [markdown]
# ## 6. BPE-dropout
#
# BPE has no scores to sample from; Provilkov et al. (2020) instead skip each merge with
# probability `p`. In `tokenizers` a skipped merge is only *postponed*: it goes back into
# the queue as soon as another merge happens. labkit's `BPEDropout` runs the same process
# over its byte-level engine (GPT-2 here), and its draws fit the exact distribution as
# `tokenizers`' do (tests in `tests/test_training_dropout.py`).

# %%
from labkit.training.bpe_dropout import BPEDropout, expected_tokens

dropout = BPEDropout.load("gpt-2")
gpt2 = dropout.engine
for p in (0.0, 0.1, 0.3):
    ids = dropout.encode(sentence, p, seed=3)
    print(f"p={p:<4} {len(ids):2} tokens: {[gpt2.token_bytes_of(i).decode('utf-8', 'replace') for i in ids]}")

# %%
rows = [{"p": p, "outcomes": len(dist := dropout.distribution(" money", p)),
         "P(one token)": round(dist.get((gpt2.encode_ordinary(" money")[0],), 0.0), 4),
         "expected tokens": round(expected_tokens(dist), 3)} for p in (0.05, 0.1, 0.3, 0.6)]
pd.DataFrame(rows)

# %% [markdown]
# ## Try it
#
# Each checker prints `right` or `wrong` with a hint (`not answered yet` while the answer
# is still `...`). Worked answers are in `notebooks/solutions/13_where_vocabularies_come_from.ipynb`.
#
# 1. **One EM step by hand.** The corpus is `ab` ×2, `abc` ×1, `bc` ×1; the pieces `a`, `b`,
#    `c`, `ab`, `bc` all start at probability 0.2. List each word's segmentations, weight
#    them by the product of their piece probabilities, share the word's count among them,
#    add up the expected count of each piece, and divide by the total. What are the new
#    probabilities?
# 2. **alpha → ∞.** Which pieces does a sample of `the school` give with botchan-unigram as
#    `alpha` grows without bound?
# 3. **alpha → 0.** And what probability does each segmentation of `botchan` get as `alpha`
#    goes to 0?

# %%
from labkit.exercises.training import check_em_step, check_most_likely_sample, check_spread_at_zero

new_probabilities = ...  # a dict: {"a": ..., "b": ..., "c": ..., "ab": ..., "bc": ...}
check_em_step({"ab": 2, "abc": 1, "bc": 1}, dict.fromkeys(["a", "b", "c", "ab", "bc"], 0.2), new_probabilities)

# %%
most_likely = ...  # a list of pieces
check_most_likely_sample("the school", most_likely)

# %%
each_probability = ...  # a number, or a fraction such as "1/7"
check_spread_at_zero("botchan", each_probability)

# %% [markdown]
# ## Summary
#
# * BPE merges the most frequent pair; WordPiece's pair score merges the most surprising
#   one and spends its budget on rare strings; `tokenizers`' WordPiece trainer is BPE.
# * sentencepiece's Unigram trainer seeds with frequent right-maximal substrings, runs EM
#   with a digamma M-step, and prunes by estimated likelihood loss; with sentencepiece's
#   float arithmetic copied, labkit's vocabulary is sentencepiece's bit for bit.
# * The same lattice that gives the best segmentation gives the k best (A*) and random
#   ones (`exp(alpha · score)`, forward-filtering backward-sampling); BPE-dropout postpones
#   merges at random. Draws are checked against exact distributions with chi-square.
