# %%
import labkit
print(labkit.__version__)

# %% [markdown]
# # 04 · WordPiece: BERT's basic tokenizer, then greedy longest match
#
# BERT and its descendants (bge, MiniLM, E5 ...) tokenize in two stages. A **basic
# tokenizer** cleans and normalises the text and cuts it into words and punctuation marks;
# then **WordPiece** splits each word greedily: the longest piece of the vocabulary that
# starts the word, then the longest `##`-continuation after it, and so on. There are no
# merges and no scores, only the vocabulary.
#
# **Learning goals**
# 1. Run the basic tokenizer step by step: clean, isolate CJK, strip accents, lowercase, split.
# 2. Say which characters count as punctuation or accents, and why Python's own Unicode
#    tables are not quite the right ones.
# 3. Trace greedy longest-match-first on a word, and explain why `unaffable` becomes
#    `un ##aff ##able` in one vocabulary and `una ##ffa ##ble` in BERT's.
# 4. Know the limits: `[UNK]` for whole words, emoji, scripts the vocabulary lacks, and what
#    accent stripping does to Hindi and Korean.
# 5. Check labkit against `tokenizers` on every shipped vector (tokenizer.json), and see how
#    llama.cpp reads the same vocabulary from a GGUF.

# %% [markdown]
# ## 1. The basic tokenizer, step by step
#
# One sentence through each step (`steps()` runs them one at a time; the engine runs them
# fused, character by character):

# %%
import pandas as pd
from labkit.algorithms.bert_basic import BertBasicTokenizer

basic = BertBasicTokenizer()  # uncased: lowercase=True, strip_accents follows it
sample = "Héllo\u200b,\tWÖRLD! 東京は晴れ. Don't"
steps = basic.steps(sample)
pd.DataFrame(steps.rows(), columns=["step", "text"])

# %%
assert steps.cleaned == "Héllo, WÖRLD! 東京は晴れ. Don't"            # U+200B dropped, tab -> space
assert steps.cjk_spaced.count(" 東 ") == 1 and steps.cjk_spaced.count(" は ") == 1
assert basic.tokenize("こんにちは世界") == ["こんにちは", "世", "界"]  # kana are not CJK ideographs
assert steps.accents_stripped.startswith("Hello, WORLD!")
assert steps.words == ["hello", ",", "world", "!", "東", "京", "は", "晴", "れ", ".", "don", "'", "t"]
assert basic.tokenize(sample) == steps.words

# %% [markdown]
# What each step does:
#
# * **clean**: NUL, U+FFFD and every control, format or private-use character is dropped
#   (the zero-width space above); each whitespace character becomes a plain space.
# * **isolate CJK**: a space on each side of every CJK *ideograph*, so each is a word of its
#   own. Japanese kana are not in those blocks: `こんにちは世界` gives the words
#   `こんにちは`, `世`, `界`.
# * **strip accents** (uncased models): decompose to NFD and drop the nonspacing marks.
# * **lowercase**: one character at a time.
# * **split**: on spaces (dropped) and on punctuation, each mark its own word. `Don't`
#   becomes three words: `don`, `'`, `t`.

# %% [markdown]
# ### Which characters are "punctuation"?
#
# BERT's rule is *ASCII punctuation or Unicode category P*, which makes `$`, `+`, `^` and
# `` ` `` punctuation although Unicode calls them symbols. And "Unicode" here means the
# tables compiled into `tokenizers` (an older Unicode than Python 3.11's), so labkit ships
# the tables measured from `tokenizers` over every code point. Where Python's own
# `unicodedata` would get it wrong:

# %%
import unicodedata
from labkit.algorithms import bert_basic

print([c for c in "$+<=>^`|~" if bert_basic.is_punctuation(c)], [unicodedata.category(c) for c in "$+^"])
bmp_and_more = [chr(cp) for cp in range(0x30000) if not 0xD800 <= cp < 0xE000]
py_punct = {c for c in bmp_and_more if unicodedata.category(c).startswith("P")}
bert_punct = {c for c in bmp_and_more if bert_basic.is_punctuation(c)}
py_marks = {c for c in bmp_and_more if unicodedata.category(c) == "Mn"}
bert_marks = {c for c in bmp_and_more if bert_basic.is_nonspacing_mark(c)}
print(f"Unicode punctuation Python knows but tokenizers does not: {len(py_punct - bert_punct)}, "
      f"e.g. U+{ord(min(py_punct - bert_punct)):04X} {unicodedata.name(min(py_punct - bert_punct))}")
print(f"nonspacing marks Python knows but tokenizers does not: {len(py_marks - bert_marks)}")
assert py_punct - bert_punct and py_marks - bert_marks
assert bert_basic.is_punctuation("$") and unicodedata.category("$") == "Sc"

# %% [markdown]
# ## 2. Greedy longest match, drawn
#
# WordPiece on one word: at each position try the longest candidate first, shorten it one
# character at a time until the vocabulary has it, take it, and continue from its end with
# the `##` prefix. The textbook vocabulary (the one in BERT's README) makes `unaffable`
# into `un ##aff ##able`:

# %%
from labkit.algorithms.wordpiece import WordPiece
from labkit.viz.wordpiece import GreedySearch, plot_greedy_search

textbook = WordPiece.from_tokens(["[UNK]", "un", "##aff", "##able", "a", "##a"])
search = GreedySearch("unaffable", textbook.trace("unaffable"))
search

# %%
print(repr(search))
assert textbook.tokenize("unaffable") == ["un", "##aff", "##able"]
assert search.pieces == ["un", "##aff", "##able"]

# %%
import matplotlib.pyplot as plt
plot_greedy_search(search)
plt.show()

# %% [markdown]
# Red rows are look-ups that failed, green ones the pieces taken. Candidates longer than the
# longest piece of the vocabulary are never tried (none could match).
#
# ### Why BERT's own vocabulary says `una ##ffa ##ble`
#
# Greedy longest match is not morphology. The real uncased vocabulary has `una` (but not
# `unaf`...), so the first piece is `una`, and the rest must start at `ffable`. (The
# vocabulary here is all-MiniLM-L6-v2's `tokenizer.json`, BERT's uncased vocabulary with
# BERT's pipeline; the same vocabulary as a llama.cpp GGUF, `bert-bge`, comes in section 4.)

# %%
bert = labkit.load("minilm")
model = bert.model
prefixes = [p for p in ("u", "un", "una", "unaf", "unaff", "unaffa", "unaffab", "unaffabl", "unaffable") if p in model.vocab]
print("prefixes of 'unaffable' in the vocabulary:", prefixes)
real = GreedySearch("unaffable", model.trace("unaffable"))
print(repr(real))
assert bert.encode("unaffable").tokens == ["una", "##ffa", "##ble"] and prefixes == ["u", "un", "una"]
assert "##affable" not in model.vocab and "##aff" not in model.vocab

# %% [markdown]
# ### The whole algorithm, on the page
#
# Greedy longest match in a dozen lines, run on BERT's real vocabulary for every word the
# basic tokenizer makes from the first 400 lines of botchan, and checked against labkit's model:

# %%
def greedy_longest_match(word: str, vocab, unk: str = "[UNK]", prefix: str = "##", max_chars: int = 100) -> list[str]:
    """Take the longest vocabulary piece at each position (``##`` after the first); any dead end: [UNK]."""
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):  # longest candidate first
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
        else:
            return [unk]  # no piece starts here: the whole word is unknown
        pieces.append(piece)
        start = end
    return pieces


from labkit.bench.harness import corpus_lines

words = [w for line in corpus_lines()[:400] for w in bert.basic.tokenize(line)]
assert all(greedy_longest_match(w, model.vocab) == model.tokenize(w) for w in words)
print(f"greedy_longest_match = labkit's model on all {len(words):,} words ({len(set(words)):,} distinct)")

# %% [markdown]
# labkit's version gives the same pieces and adds: it never tries a candidate longer than
# the vocabulary's longest piece, it records every attempt for the drawings above, it keeps
# character offsets, and the engine caches each word's pieces.

# %% [markdown]
# ## 3. `[UNK]` and the limits of WordPiece
#
# If at some position *no* piece matches, the **whole word** becomes `[UNK]`, not just the
# character that failed. So does any word longer than 100 characters. A vocabulary built
# from English Wikipedia and books has a few pieces for other scripts, and none for emoji:

# %%
from labkit.viz.spans import token_spans

rows = []
for label, text in [("emoji", "🦙 llamas 😀"), ("Khmer", "ខ្ញុំស្រឡាញ់"), ("Cyrillic", "нещо на Български"),
                    ("Greek", "Καλημέρα κόσμε"), ("Hindi", "नमस्ते दुनिया"), ("Korean", "안녕하세요"),
                    ("Japanese", "こんにちは世界"), ("long word", "x" * 101)]:
    enc = bert.encode(text)
    rows.append({"script": label, "text": text[:20], "tokens": len(enc.ids), "[UNK]": enc.tokens.count("[UNK]"),
                 "pieces": " ".join(enc.tokens)[:60], "decode": bert.decode(enc.ids)[:24]})
pd.DataFrame(rows)

# %%
by = {r["script"]: r for r in rows}
assert by["emoji"]["[UNK]"] == 2 and by["Khmer"]["pieces"] == "[UNK]" and by["long word"]["pieces"] == "[UNK]"
assert by["Cyrillic"]["[UNK]"] == 0 and by["Cyrillic"]["tokens"] == 15   # one piece per letter
assert by["Hindi"]["decode"] == "नमसत दनिया"                               # vowel signs and virama stripped
assert by["Korean"]["tokens"] == 12                                        # NFD splits syllables into jamo
korean_growth = by["Korean"]["tokens"] / len("안녕하세요")
print(f"Korean: {len('안녕하세요')} syllables -> {by['Korean']['tokens']} pieces ({korean_growth:.1f}x)")
assert korean_growth == 2.4
token_spans(bert, "I ❤ NY, 안녕")

# %% [markdown]
# Three things to read from the table:
#
# * **Emoji and unseen scripts** (Khmer here) are `[UNK]`: the information is gone.
# * **Accent stripping is not harmless outside Latin script**: Devanagari vowel signs and
#   the virama are nonspacing marks, so `नमस्ते` comes back as `नमसत`; and NFD decomposes
#   every Hangul syllable into its two or three jamo (`안` -> `ᄋ ##ᅡ ##ᆫ`): `안녕하세요`
#   grows from 5 syllables to 12 pieces, 2.4x.
# * **Scripts with letters but few words** in the vocabulary (Cyrillic, Greek) fall apart
#   into one piece per letter.

# %% [markdown]
# ## 4. Decoding
#
# Decoding joins `##` pieces to the piece before and puts a space before every other piece;
# then `tokenizers`' cleanup removes the space before `.`, `?`, `!`, `,` and a few English
# contractions. The cleanup looks at one token at a time, so `don ' t` is not repaired; and
# case and accents are gone for good:

# %%
text = "Héllo World! It's unaffable, isn't it?"
enc = bert.encode(text)
ref = labkit.load("minilm", engine="hf")
print(enc.tokens)
print(repr(bert.decode(enc.ids)))
assert bert.decode(enc.ids) == ref.decode(enc.ids) == "hello world! it ' s unaffable, isn ' t it?"
print(repr(bert.decode(bert.encode(text, add_special_tokens=True).ids)))
assert bert.decode(bert.encode(text, add_special_tokens=True).ids, skip_special_tokens=True) == bert.decode(enc.ids)

# %% [markdown]
# ### The same vocabulary in llama.cpp
#
# `bert-bge` is BERT's uncased vocabulary in a GGUF, and a GGUF's reference is llama.cpp,
# which has a WordPiece of its own (`labkit.algorithms.llama_wpm`): its own Unicode tables,
# an "NFD" that keeps only the *first* code point of a decomposition (a Hangul syllable
# becomes its first jamo), no 100-character limit, and a decoder that keeps the first word's
# space and joins `' s` and `n ' t`. labkit serves the GGUF that way; on the 46 llama.cpp
# vectors the ids are the same as `tokenizers`' (section 5), elsewhere they can differ, which
# is why `engine="hf"` refuses the GGUF (to compare, `labkit.engines.hf.convert_model_file`
# gives `tokenizers`' reading of it by name):

# %%
gguf = labkit.load("bert-bge")
try:
    labkit.load("bert-bge", engine="hf")
except labkit.LabkitError as exc:
    print(str(exc)[:150], "...")
gguf_rows = {label: gguf.encode(sample) for label, sample in [("decode", text), ("Korean", "안녕하세요"), ("long word", "x" * 101)]}
print(repr(gguf.decode(gguf_rows["decode"].ids)), gguf_rows["Korean"].tokens, len(gguf_rows["long word"].ids))
# llama.cpp's own answers (llama-cpp-python 0.3.36) for these texts
assert gguf_rows["decode"].ids == enc.ids and gguf.decode(enc.ids) == " hello world! it's unaffable, isn't it?"
assert gguf.decode(gguf_rows["Korean"].ids) == " ᄋᄂᄒᄉᄋ" and len(gguf_rows["long word"].ids) == 51

# %% [markdown]
# ## 5. Exactness against tokenizers
#
# The 46 llama.cpp vectors for bge-small (made with HF `tokenizers`) through labkit on
# all-MiniLM-L6-v2's `tokenizer.json` (padding and truncation off) and on the GGUF of the
# same vocabulary, against the `tokenizers` engine on that `tokenizer.json`: ids, offsets, `[CLS] ... [SEP]` framing
# and decode. The GGUF decodes as llama.cpp does, so its decodes differ from `tokenizers`'
# (the test suite checks them against llama.cpp's own answers), and so do its offsets where
# llama.cpp's normalisation drops characters.

# %%
from labkit.vectors import load_vectors

vectors = load_vectors("bert-bge")
for name in ("bert-bge", "minilm"):
    mine, theirs = labkit.load(name, engine="labkit"), labkit.load("minilm", engine="hf")
    ok = sum(mine.encode(t, parse_special=False).ids == ids == theirs.encode(t, parse_special=False).ids for t, ids in vectors)
    offsets = sum(mine.encode(t).offsets == theirs.encode(t).offsets for t, _ in vectors)
    framed = sum(mine.encode(t, add_special_tokens=True).ids == theirs.encode(t, add_special_tokens=True).ids for t, _ in vectors)
    decoded = sum(mine.decode(ids) == theirs.decode(ids) for _, ids in vectors)
    print(f"{name:9} ids {ok}/{len(vectors)}  offsets {offsets}/{len(vectors)}  framed {framed}/{len(vectors)}  decode {decoded}/{len(vectors)}")
    assert ok == framed == len(vectors)
    assert offsets == decoded == len(vectors) or name == "bert-bge"

# %% [markdown]
# ## 6. Speed
#
# A quick look on a quarter of a MB of botchan (single thread, same run). Ratios are against
# `tokenizers.Tokenizer.encode`. Warm means the word cache is filled. `python -m labkit.bench
# wordpiece` measures properly: CPU time, interleaved rounds, three texts, each ratio against
# labkit's wrapper and against `tokenizers` called directly.

# %% tags=["nbval-ignore-output"]
from labkit.bench.wordpiece import measure
from labkit.bench.harness import corpus, table as text_table

rows = measure("minilm", corpus(0.25), repeat=1)
print(text_table(rows, ["vocab", "engine", "MB/s", "x tokenizers", "exact"]))

# %% [markdown]
# ## Try it
# Replace each `...` with your answer and run the cell: the checker prints `right`, or
# `wrong` with a hint. Worked answers: `notebooks/solutions/04_wordpiece.ipynb`.
#
# 1. The words of `"Ça coûte 5$ (environ)!"` after the basic tokenizer (uncased). Hint 1:
#    accents go and case goes. Hint 2: `$`, `(`, `)` and `!` are each a word of their own.

# %%
from labkit.exercises.wordpiece import check_basic_words, check_wordpiece, check_bert_tokens

answer_1 = ...
check_basic_words("Ça coûte 5$ (environ)!", answer_1)

# %% [markdown]
# 2. Vocabulary `["[UNK]", "play", "##ing", "##in", "p", "##lay"]`: the pieces of `"playing"`,
#    then of `"plays"`. Hint 1: longest first, so `play` before `p`. Hint 2: a dead end
#    anywhere makes the whole word `[UNK]`.

# %%
answer_2a = ...
check_wordpiece(["[UNK]", "play", "##ing", "##in", "p", "##lay"], "playing", answer_2a)
answer_2b = ...
check_wordpiece(["[UNK]", "play", "##ing", "##in", "p", "##lay"], "plays", answer_2b)

# %% [markdown]
# 3. BERT's (uncased) tokens for `"Tokenization!"`. Hint: the basic tokenizer lowercases first.

# %%
answer_3 = ...
check_bert_tokens("Tokenization!", answer_3)

# %% [markdown]
# ## Summary
# * BERT's basic tokenizer cleans (drops controls, unifies whitespace), isolates CJK
#   ideographs, strips accents and lowercases (uncased models), and splits on spaces and
#   punctuation, with character classes from `tokenizers`' own Unicode tables.
# * WordPiece takes the longest vocabulary piece at each position, `##` after the first;
#   one position without a piece, or more than 100 characters, makes the whole word `[UNK]`.
# * Greedy is not morphology (`una ##ffa ##ble`), and the uncased pipeline is lossy: case,
#   accents, emoji and unseen scripts do not come back, and Hindi and Korean are mangled by
#   NFD plus mark stripping.
# * labkit matches `tokenizers` on every vector, with offsets, for the `tokenizer.json`; the
#   GGUF of the same vocabulary is llama.cpp's WordPiece (same ids on the vectors, its own
#   normalisation and decoding).
