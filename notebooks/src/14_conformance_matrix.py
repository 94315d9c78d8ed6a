# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 14 · The conformance matrix: what labkit serves exactly, and what it refuses
#
# labkit is exact on the vocabularies it ships, but a user brings their own tokenizer: a
# `tokenizer.json` with any normaliser, pre-tokenizer, model, decoder and post-processor
# `tokenizers` allows. This notebook builds dozens of such tokenizers **in the run** (small
# vocabularies trained on the botchan novel in seconds), loads each one with every engine,
# and holds every answer against `tokenizers` called directly. Each cell of the matrix is
# either **exact** (ids, tokens, offsets and decode equal on every string) or **refused**
# (the engine said at load which component it does not implement). A third outcome, a
# silent difference, is a bug: the tests fail on it.
#
# **Learning goals**
# - see a tokenizer.json as a pipeline of components, each with options that change ids;
# - read the matrix: which components labkit implements, which it refuses, and why;
# - know what `engine=None` picks for a file and where it says so.

# %%
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from labkit.conformance import all_cases, run_matrix
from labkit.conformance.corpus import mixed_corpus
from labkit.conformance.hf_json_configs import build_json, metaspace, node

# %% [markdown]
# ## 1. One configuration
#
# A configuration is a trained vocabulary plus one choice per component. Here is the Llama
# style: a BPE over Metaspace words with byte fallback, and a decoder chain that turns `▁`
# back into spaces and `<0xNN>` runs back into text.

# %%
cases = all_cases(["hf"])
llama = next(c for c in cases if c.name == "hf/bpe-metaspace-first")
print(llama.name)
for kind, label in llama.components:
    print(f"  {kind:15} {label}")

# %% [markdown]
# The corpus every configuration is compared on mixes botchan lines with the strings that
# break tokenizers: every Unicode whitespace character, combining marks in both normal
# forms, CJK, Thai, Devanagari, Arabic, emoji ZWJ sequences, long repeats, and text that
# looks like the configuration's added tokens or their prefixes.

# %%
corpus = mixed_corpus(["<|im_end|>"], botchan=8)
print(len(corpus), "strings, for example:")
for text in ["cafe\u0301", "👨\u200d👩\u200d👧\u200d👦 family 🏳\ufe0f\u200d🌈 flag 👍🏽 ok", "x <|im_end|> y", "x <|im_end| y"]:
    assert text in corpus
    print("  ", repr(text))

# %% [markdown]
# ## 2. The whole matrix
#
# Every tokenizer.json configuration, four engines: `labkit` (the book's own pure-Python
# pipeline), `hf` (`tokenizers` built by labkit from the same file), and the two other
# reference engines, which serve a tokenizer.json only where they can be exact. The tests run
# the same matrix on 40 botchan lines per configuration, with a fifth column `default`
# (`engine=None`, compared in full); here 4 lines keep the notebook fast, and section 3 shows
# which engine `engine=None` picks.

# %% tags=["nbval-ignore-output"]
workdir = Path(tempfile.mkdtemp(prefix="labkit-matrix-"))
started = time.perf_counter()
result = run_matrix(cases, workdir, engines=("labkit", "hf", "tiktoken", "sentencepiece"), botchan=4)
print(f"ran in {time.perf_counter() - started:.1f} s")

# %%
summary = result.summary()
for key in ("configurations", "cells", "exact", "refused", "differs", "strings", "comparisons"):
    print(f"{key:15} {summary[key]:>8,}")
assert summary["differs"] == 0, result.differences()
assert summary["exact"] + summary["refused"] == summary["cells"]

# %% [markdown]
# Components down, engines across. A cell counts the configurations using that component
# (or option) that the engine served exactly, and the strings compared; `refused` counts
# the ones it declined at load. Zero cells differ.

# %%
def cell_text(counter: Counter) -> str:
    parts = []
    if counter["exact"]:
        parts.append(f"exact {counter['exact']} ({counter['strings']:,} strings)")
    if counter["refused"]:
        parts.append(f"refused {counter['refused']}")
    if counter["differs"]:
        parts.append(f"DIFFERS {counter['differs']}")
    return " · ".join(parts)


rows = []
for (kind, label), by_engine in result.by_component().items():
    rows.append({"component": kind, "option": label,
                 **{engine: cell_text(by_engine.get(engine, Counter())) for engine in result.engines}})
matrix = pd.DataFrame(rows).set_index(["component", "option"])


def colour(value: str) -> str:
    if "DIFFERS" in value:
        return "background-color: #f4a6a6"
    if value.startswith("exact") and "refused" not in value:
        return "background-color: #cdeccd"
    return "background-color: #f6e3b4" if value else ""


pd.set_option("display.max_rows", 300)
matrix.style.set_uuid("conformance").map(colour)  # a fixed uuid: the stored HTML is deterministic

# %% [markdown]
# ## 3. Why labkit refuses
#
# labkit implements a component only when the matrix shows it exact. Everything else is
# refused at load, and the refusal names the component, so a user never gets different ids
# without a word. `engine=None` then falls back to `tokenizers` and says so in `repr`.

# %%
refusals = [(c.case, c.message.split("does not implement ")[-1].split("); engines")[0])
            for c in result.cells if c.engine == "labkit" and c.status == "refused"]
print(pd.DataFrame(refusals, columns=["configuration", "refused component"]).to_string(index=False))
assert {name for name, _ in refusals} == {"hf/wordlevel-split-oniguruma-hex"}
# Nmt, the ByteLevel normaliser, FixedLength, UnicodeScripts and Oniguruma's \w \W \b \B were refused here
# until labkit implemented them
rarer = {"hf/wordlevel-nmt", "hf/wordlevel-fixed-length", "hf/bpe-bytelevel-normalizer-fixed-length",
         "hf/bpe-metaspace-unicode-scripts", "hf/wordlevel-unicode-scripts", "hf/wordlevel-split-oniguruma-word",
         "hf/wordlevel-split-digit-groups"}
assert all(c.status == "exact" for c in result.cells if c.case in rarer and c.engine in ("labkit", "hf"))

# %% [markdown]
# A Split regex with `\w`, `\W`, `\b` or `\B` is served now. Oniguruma's word characters
# are `regex`'s but for eight code points, measured on every code point
# (`tests/test_onig_word.py`): outside a class `² ³ ¹ ¼ ½ ¾` are word characters, inside one
# they are not, and the joiners U+200C and U+200D never are. labkit spells the escapes that
# way for `regex`. Tiny Aya's digit split `\d{1,3}(?=(?:\d{3})*\b)` backtracks quadratically in
# a run of digits, in `tokenizers` too; labkit finds the same spans with a linear function.

# %%
import regex
from tokenizers import Regex, pre_tokenizers

from labkit.algorithms.hf_normalize import Piece, pattern_matches
from labkit.algorithms.hf_pretokenize import pre_tokenize

sample = "x²\u200dy [²a] 1234567 89x 12"
for pattern in (r"\w+", r"[^\w\s]+", r"\d{1,3}(?=(?:\d{3})*\b)"):
    onig = pre_tokenizers.Split(Regex(pattern), "isolated").pre_tokenize_str(sample)
    split_node = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}
    ours = [(p.text, (p.align[0][0], p.align[-1][1])) for p in pre_tokenize([Piece.of(sample)], [split_node])]
    print(f"{pattern:26} labkit: {[sample[s:e] for s, e in pattern_matches({'Regex': pattern}, sample)]}")
    print(f"{'':26} regex alone: {regex.findall(pattern, sample)}")
    assert ours == onig

# %% [markdown]
# The last of those, UnicodeScripts, cuts where the writing system changes. Its loop is short:
# a new piece wherever a character's script differs from the last script seen. The rules are
# in the script table: tokenizers' own (an older Unicode than Python's, copied into
# `data/hf/tokenizers_unicode_scripts.json`), with kana and U+30FC counted as Han and a space
# as no script at all, so a leading space belongs to no piece and is dropped.

# %%
from tokenizers import pre_tokenizers

from labkit.algorithms.unicode_scripts import ANY, script, script_pieces


def pieces_by_script(text):
    starts, last = [], None
    for index, char in enumerate(text):
        if script(char) != ANY and script(char) != last:
            starts.append(index)
            last = script(char)
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


sample = "  Tokyo 東京 ひらがな-カタカナ, Москва 2026!"
print([(char, script(char)) for char in "Tk東ひカー- М2"])
print(pieces_by_script(sample))
assert script("ひ") == script("カ") == script("ー") == script("東") == "Han" and script(" ") == ANY
assert not pieces_by_script(sample)[0].startswith(" ")  # the leading spaces belong to no piece
assert pieces_by_script(sample) == [sample[a:b] for a, b in script_pieces(sample)]
assert pieces_by_script(sample) == [p for p, _ in pre_tokenizers.UnicodeScripts().pre_tokenize_str(sample)]

# %%
# engine=None picks labkit exactly where labkit's cell is exact (tests/test_conformance_hf_matrix.py checks every one)
labkit_cells = Counter(c.status for c in result.cells if c.engine == "labkit")
print(f"engine=None picks labkit for {labkit_cells['exact']} configurations and hf for {labkit_cells['refused']}")
assert labkit.load(llama.build(workdir / "llama-demo")).engine == "labkit"
tiktoken_exact = sorted(c.case for c in result.cells if c.engine == "tiktoken" and c.status == "exact")
print("tiktoken serves exactly:", tiktoken_exact)
oniguruma = next(c for c in cases if c.name == "hf/wordlevel-split-oniguruma-hex")
tok = labkit.load(oniguruma.build(workdir / "oniguruma-demo"))
print(repr(tok).replace(str(workdir), "…"))
assert tok.engine == "hf" and "pre_tokenizer Split regex" in tok.engine_note

# %% [markdown]
# ## 4. Build your own
#
# `build_json` takes a base vocabulary (`byte`, `plain`, `prefix`, `suffix`, `meta`,
# `wordpiece`, `unigram`, `wordlevel`) and any components, written as tokenizer.json writes
# them. Here: a Unigram model after NFKC with a Metaspace pre-tokenizer, the configuration
# that once gave `['▁', '▁', 'x']` for `" x"` with labkit's default engine.

# %%
import tokenizers

text = build_json("unigram", normalizer=node("NFKC"), pre_tokenizer=metaspace(), decoder=metaspace())
path = workdir / "mine" / "tokenizer.json"
path.parent.mkdir()
path.write_text(text, encoding="utf-8")
mine, reference = labkit.load(path), tokenizers.Tokenizer.from_file(str(path))
print(mine.engine, mine.encode(" x").tokens, reference.encode(" x").tokens)
assert mine.engine == "labkit" and mine.encode(" x").tokens == reference.encode(" x").tokens == ["▁", "x"]

# %% [markdown]
# ## 5. SentencePiece `.model` files
#
# The same runner holds a `.model` against `sentencepiece` called directly, for 26
# trainer configurations (`tests/test_conformance_spm_matrix.py`: model types, byte
# fallback, digit and whitespace splitting, user-defined and control symbols, the
# normaliser flags and rules). `labkit`, `sentencepiece` and `engine=None` are exact on all
# of them, SentencePiece's char and word models included (labkit refused those two until it
# learnt them: notebook 03 §9). The `hf` engine **refuses every `.model`**: it would be `tokenizers`
# running a pipeline labkit converts the file into, and on every one of the 26
# configurations that pipeline reads something differently from `sentencepiece` (its
# `Precompiled` normaliser works per grapheme cluster; `<unk>` decodes as its spelling, not
# ` ⁇ `; text spelled like a byte piece; user-defined symbols split before normalising; some
# offsets and whitespace). A few configurations, four engines, 4 botchan lines plus the
# mixed corpus:

# %%
from labkit.conformance.runner import run_case
from labkit.conformance.spm_matrix import spm_cases, train_model

spm_rows = {}
for case in spm_cases():
    if case.name in ("spm/unigram", "spm/bpe", "spm/bpe+byte_fallback", "spm/unigram+user_defined", "spm/char",
                     "spm/word"):
        cells = run_case(case, workdir / "spm", engines=("labkit", "sentencepiece", "default", "hf"), botchan=4)
        spm_rows[case.name] = {cell.engine: f"{cell.status} ({cell.strings})" if cell.status == "exact" else cell.status
                               for cell in cells}
spm_table = pd.DataFrame(spm_rows).T
spm_table

# %%
assert all(row["hf"] == "refused" for row in spm_rows.values())
assert all(row[e].startswith("exact") for row in spm_rows.values() for e in ("labkit", "sentencepiece", "default"))

# %% [markdown]
# The refusal says why and which engines can serve the file:

# %%
bpe_model = train_model("bpe", workdir / "spm")
try:
    labkit.load(bpe_model, engine="hf")
except labkit.LabkitError as exc:
    refusal = str(exc)
print(refusal.replace(str(workdir), "…"))
assert "does not serve SentencePiece .model files" in refusal and refusal.endswith("engines that can: labkit, sentencepiece")

# %% [markdown]
# To compare the two libraries on a `.model` (as notebook 03's appendix does), ask for
# `tokenizers`' conversion by name: `labkit.engines.hf.convert_model_file`. Its `repr` says
# it is not exact. It reports offsets as sentencepiece does (the `▁` the dummy prefix adds
# covers no character, `(0, 0)`), yet on this configuration's corpus it still differs here:

# %%
from labkit.engines.hf import convert_model_file
from labkit.conformance.corpus import mixed_corpus
import sentencepiece

converted = convert_model_file(bpe_model)
sp_direct = sentencepiece.SentencePieceProcessor(model_file=str(bpe_model))
print(repr(converted))
print(converted.encode("x").offsets)
texts = mixed_corpus(botchan=4)
differ = [t for t in texts if converted.encode(t).ids != sp_direct.encode(t)
          or converted.decode(sp_direct.encode(t)) != sp_direct.decode(sp_direct.encode(t))]
print(f"ids or decode differ on {len(differ)} of {len(texts)} strings, e.g. {differ[0]!r}:")
print("  tokenizers' conversion:", converted.decode(sp_direct.encode(differ[0])))
print("  sentencepiece:         ", sp_direct.decode(sp_direct.encode(differ[0])))
assert converted.encode("x").offsets == [(0, 0), (0, 1)] and differ

# %% [markdown]
# ## 6. Beyond the matrix: random configurations
#
# The matrix is a covering set written by hand: every option at least once, and the pairs
# known to interact. A user's file may combine components in ways nobody listed, so two
# commands draw whole configurations at random:
#
# - `python -m labkit.conformance.random_hf --seeds 0:2000`: a tokenizer.json with a random
#   normaliser, pre-tokenizer, decoder, post-processor, model flags and up to five added
#   tokens with random flags and awkward spellings;
# - `python -m labkit.conformance.random_spm --seeds 0:500`: a `.model` trained with a random
#   combination of trainer options, its proto sometimes edited into what a user's file can
#   hold and training never writes (unused or control pieces, tied scores, a denormaliser);
# - `python -m labkit.conformance.random_tiktoken --seeds 0:2000`: a user's own `.tiktoken`
#   rank file (tokens joined from earlier ones, and sometimes a token ranked below its part,
#   words no merge reaches, rank gaps, a byte with no rank) under one of eight splits,
#   compared with `tiktoken.Encoding` built from the same ranks and called directly;
# - `python -m labkit.conformance.random_legacy --seeds 0:500`: GPT-2's `vocab.json` +
#   `merges.txt` and BERT's `vocab.txt` with the irregularities real files have (no
#   `#version` line or one in the middle, CRLF, a BOM, blank or repeated lines, trailing
#   spaces, missing specials), compared with `tokenizers` reading the same files;
# - `python -m labkit.conformance.random_gguf --seeds 0:150`: a byte-level GGUF with extra
#   tokens spelled as real models spell them and typed at random, compared with **llama.cpp**
#   itself. llama-cpp-python cannot be installed beside labkit, so its answers for seeds
#   0:150 are stored in `data/gguf/random_llama_cpp.json` (made by
#   `tools/make_random_gguf_refs.py`) and the command compares with them.
#
# Each seed is **exact**, **refused** at load (the message names what labkit does not
# implement; `engine=None` then serves the file with the library), **skipped** (the reference
# itself refuses, crashes or answers at random), or **differs**: a bug, which the tests fail
# on. The regression tests in `tests/test_conformance_random_hf.py`,
# `tests/test_conformance_random_spm.py` and `tests/test_conformance_random_tiktoken.py` pin
# each difference these commands found. A few seeds of each, here:

# %%
from labkit.conformance import random_gguf, random_hf, random_legacy, random_spm, random_tiktoken

hf_seeds, spm_seeds, file_seeds, gguf_seeds = range(12), range(3), range(24), range(60)  # a slice: the tests run many more
hf_results = random_hf.run_seeds(hf_seeds, engines=("labkit", "default"), botchan=4)
spm_counts, spm_cells, _ = random_spm.run_seeds(spm_seeds, workdir / "random-spm", engines=("labkit", "default"),
                                                 botchan=2, out=open(workdir / "random-spm.log", "w"))
(workdir / "random-tiktoken").mkdir()
tiktoken_counts = random_tiktoken.run_seeds(file_seeds, workdir / "random-tiktoken", engines=("labkit",))
(workdir / "random-legacy").mkdir()
legacy_counts = random_legacy.run_seeds(file_seeds, workdir / "random-legacy", engines=("labkit",))
# every engine at once: the byte-level row of the GGUF table below reuses these counts
gguf_counts = random_gguf.run_seeds(gguf_seeds, random_gguf.load_reference(), engines=random_gguf.ENGINES)
random_summary = pd.DataFrame({
    f"tokenizer.json ({len(hf_seeds)} seeds)": Counter(r.status for r in hf_results),
    f".model ({len(spm_seeds)} seeds)": {k: spm_counts[k] for k in ("exact", "refused", "differs", "skipped")},
    f".tiktoken ({len(file_seeds)} seeds)": {k: tiktoken_counts["labkit", k] for k in ("exact", "refused", "differs", "skipped")},
    f"vocab.json / vocab.txt ({len(file_seeds)} seeds)": {k: legacy_counts["labkit", k] for k in ("exact", "refused", "differs", "skipped")},
    f"GGUF vs llama.cpp ({len(gguf_seeds)} seeds)": {k: gguf_counts["labkit", k] for k in ("exact", "refused", "differs", "skipped")},
}).reindex(["exact", "refused", "differs", "skipped"]).fillna(0).astype(int)
random_summary

# %%
assert random_summary.loc["differs"].sum() == 0
assert random_summary.loc["exact"].sum() >= 20
for result in hf_results:  # a refusal names the component, and engine=None serves the file with tokenizers
    if result.status == "refused":
        cell = {c.engine: c for c in result.cells}
        assert any(word in cell["labkit"].message for word in ("normalizer", "pre_tokenizer", "model", "decoder",
                                                               "post_processor", "added token")), cell["labkit"].message
        assert cell["default"].status == "exact" and cell["default"].served_by == "hf"
served = Counter(r.served_by for r in hf_results if r.status == "exact")
print("labkit's engines that served the exact tokenizer.json seeds:", dict(served))
first_hf = next(r.seed for r in hf_results if r.status == "exact")
print(f"an exact one, seed {first_hf}:", "; ".join(f"{kind} {label}" for kind, label
                                                in random_hf.random_hf_case(first_hf).components))
first_spm = next(seed for seed, cells in spm_cells.items() if all(c.status == "exact" for c in cells))
print("an exact .model,", random_spm.describe(first_spm))
print("an exact .tiktoken, seed 0:", random_tiktoken.draw_file(0).describe())

# %% [markdown]
# ### A GGUF against llama.cpp, with every engine
#
# For a GGUF the reference is llama.cpp, so every engine labkit offers is measured against
# llama.cpp's stored answers, not only labkit's own: random files of the four main tokenizer
# models llama.cpp knows (byte-level BPE, SentencePiece-style "llama", "bert" and "t5") and of
# "hybriddna" (byte-level BPE with DNA read as 6-mers, notebook 11), and the four bundled GGUFs on 307 random texts and 505 id lists each
# (`python -m labkit.conformance.shipped_gguf`). The cell runs a slice of each family's stored
# files; `tests/test_conformance_random_gguf*.py` run every one. A library engine whose loop is not llama.cpp's
# refuses the file at load: `tokenizers` every llama, bert and t5 file (it merges by rank, turns a
# broken byte run into U+FFFD per byte, normalises with its own tables, and its Unigram holds
# other tokens than llama.cpp's t5 lattice), `sentencepiece` every t5 file and the llama files
# where its merge loop can make other tokens than llama.cpp's.

# %%
from labkit.conformance import shipped_gguf
from labkit.formats.detect import read_vocab
from labkit.paths import bundled_path

# a slice of each family's stored files (the byte-level ones counted above); the tests run them all
family_seeds = {"byte": gguf_seeds, "spm": range(30), "wpm": range(30), "ugm": range(12), "dna": range(30)}
family_label = {"byte": "byte-level", "spm": "llama", "wpm": "bert", "ugm": "t5", "dna": "hybriddna"}
gguf_rows = {}
for family, seeds in family_seeds.items():
    counts = gguf_counts if family == "byte" else random_gguf.run_seeds(
        seeds, random_gguf.load_reference(None, family), engines=random_gguf.ENGINES, family=family)
    gguf_rows[f"{family_label[family]} ({len(seeds)} files)"] = {
        engine: " / ".join(str(counts[engine, kind]) for kind in ("exact", "refused", "differs")) for engine in random_gguf.ENGINES}
shipped_reference = shipped_gguf.load_reference()
for name in shipped_gguf.NAMES:
    case, vocab = shipped_gguf.case_of(name), read_vocab(bundled_path(name))  # each file read once, for every engine
    gguf_rows[f"bundled {name}"] = {engine: shipped_gguf.check(name, engine, shipped_reference[name], case, vocab).split(":")[0]
                                    for engine in random_gguf.ENGINES}
gguf_table = pd.DataFrame(gguf_rows).T
print("random files: exact / refused / differs; bundled files: the result (documented choices counted)")
gguf_table

# %%
random_cells = [cell for row in gguf_table.index if "files" in row for cell in gguf_table.loc[row]]
assert all(cell.endswith(" / 0") for cell in random_cells)  # no engine differs on any random file
assert not any(cell.startswith("differs") for cell in gguf_table.to_numpy().ravel())
assert gguf_table.loc["bundled llama-spm", "hf"] == gguf_table.loc["bundled bert-bge", "hf"] == "refused"
assert gguf_table.loc["bundled llama-spm", "sentencepiece"] == "exact"
assert gguf_table.loc["bundled qwen2", "labkit"].startswith("exact, ") and "ids as documented" in gguf_table.loc["bundled qwen2", "labkit"]

# %% [markdown]
# One thing the `.tiktoken` draws found: a file in which some byte has no rank. tiktoken
# keeps such a byte as a part (a merge may still take it in, as in `'zqab'` below) and fails
# when it is left alone. labkit's own engine follows tiktoken and, where tiktoken fails,
# raises a `LabkitError` that names the byte; the `hf` engine refuses the file at load,
# because `tokenizers` would drop the byte and answer:

# %%
import base64

import tiktoken

no_z = {bytes([b]): b for b in range(256) if b != ord("z")} | {b"ab": 256, b"zq": 257}
(workdir / "no_z.tiktoken").write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in no_z.items()))
tiktoken_direct = tiktoken.Encoding("no_z", pat_str=r"\S+|\s+", mergeable_ranks=no_z, special_tokens={})
no_z_tok = labkit.load(workdir / "no_z.tiktoken", engine="labkit", pre="gpt-2")


def error_of(call):
    """The LabkitError message ``call()`` raises ('' if it raises none)."""
    try:
        call()
    except labkit.LabkitError as exc:
        return str(exc)
    return ""


print("'zqab':  tiktoken", tiktoken_direct.encode_ordinary("zqab"), " labkit", no_z_tok.encode("zqab").ids)
zab_error = error_of(lambda: no_z_tok.encode("zab"))
hf_refusal = error_of(lambda: labkit.load(workdir / "no_z.tiktoken", engine="hf", pre="gpt-2"))
print("'zab':   labkit raises:", zab_error)
print("the hf engine:", hf_refusal)
assert no_z_tok.encode("zqab").ids == tiktoken_direct.encode_ordinary("zqab") == [257, 256]
assert "byte 0x7A" in zab_error and "0x7A has no rank" in hf_refusal

# %% [markdown]
# The GGUF draws found that llama.cpp does not take a file's token types as they are. When it
# loads a GGUF it marks tokens by their spelling: anything spelled like an end of
# generation (`<|im_end|>`, `</s>`, `<|endoftext|>` ...) becomes a control token, matched only
# with `parse_special`; gpt-oss's `<|channel|>` family becomes user-defined, always matched.
# It also finds added tokens longest first rather than leftmost first. labkit now reads a GGUF
# the same way (`labkit/formats/gguf_attributes.py`). Even the shipped Qwen2 file is affected:
# its ordinary token `"</s>"` is a control token to llama.cpp, so with `parse_special` it is
# cut out of the text, and `skip_special_tokens` hides it.

# %%
from labkit.core import TOKEN_TYPE_NAMES
from labkit.formats.gguf import read_gguf_kv
from labkit.paths import bundled_path

qwen = labkit.load("qwen2", engine="labkit")
stored_type = read_gguf_kv(bundled_path("qwen2"))["tokenizer.ggml.token_type"][128247]
print("'</s>' stored as", TOKEN_TYPE_NAMES[stored_type], "-> read as", TOKEN_TYPE_NAMES[qwen.vocab.token_types[128247]])
print("'a</s>b':", qwen.encode("a</s>b").ids, "as text:", qwen.encode("a</s>b", parse_special=False).ids)
assert stored_type == 1 and qwen.vocab.token_types[128247] == 3
assert qwen.encode("a</s>b").ids == [64, 128247, 65]  # llama-cpp-python 0.3.36 gives these ids
assert (qwen.decode([128247]), qwen.decode([128247], skip_special_tokens=True)) == ("</s>", "")  # hidden with the specials
assert gguf_counts["labkit", "differs"] == 0

# %% [markdown]
# A random vocabulary hides most of a split's cuts: where no merge crosses a cut, cutting there
# or not gives the same ids. `labkit.conformance.pre_probe` trains a vocabulary on 261 probe
# texts with no split at all, so that its merges cross every place a split might cut, writes
# it as a GGUF under each of the 91 `tokenizer.ggml.pre` names llama.cpp knows, and compares
# with llama.cpp's stored answers (`data/gguf/pre_types_llama_cpp.json`). It found that
# DeepSeek's CJK and fullwidth classes take no spaces in llama.cpp, and that an empty match
# (SuperBPE's digit-group lookahead) cuts. What still differs is documented: NFC before the
# split of Qwen2-like models, and GPT-4o's and Tekken's case classes, which llama.cpp's regex
# engine reads as "a letter that is not a-z" (so `é` counts as upper case there). Three names
# (afmoe, tiny_aya, cohere2moe) group digits with a function of llama.cpp's own, not a regex:
# labkit runs the same function (`digit_groups`), and the hf engine refuses them. Kimi-K2 is
# split by a hand-written scanner there, which one regex of labkit's table follows step by step.
# Four names (gemma4, granite-embed-multi-311m, sarvam-moe, whitespace) are not byte-level
# at all: llama.cpp merges UTF-8 characters for them, which labkit's UTF-8 engine does
# (notebook 03, section 8); on this byte-level probe it still gives llama.cpp's ids, and
# "whitespace" ends llama.cpp's process on the probe (a space inside a merge half).

# %%
from labkit.algorithms.pretokenize import LLAMA_CPP_UNSERVED, digit_groups
from labkit.conformance import pre_probe

probe = pre_probe.load_reference()
probe_rows = []
for pre, entry in sorted(probe["names"].items()):
    if pre in LLAMA_CPP_UNSERVED or "digests" not in entry:
        continue
    differ = pre_probe.differing_texts(pre, probe, workdir)
    probe_rows.append((pre, len(probe["texts"]) - len(differ), sum(pre_probe.documented(pre, t) for t in differ),
                       sum(not pre_probe.documented(pre, t) for t in differ)))
probe_table = pd.DataFrame(probe_rows, columns=["pre", "equal", "documented", "other"]).set_index("pre")
print(len(probe_table), "names served,", len(LLAMA_CPP_UNSERVED), "refused:", ", ".join(sorted(LLAMA_CPP_UNSERVED)))
assert probe_table["other"].sum() == 0 and (len(probe_table), len(LLAMA_CPP_UNSERVED)) == (90, 0)
assert all(probe_table.loc[name, "equal"] == len(probe["texts"]) for name in ("gemma4", "granite-embed-multi-311m", "sarvam-moe"))
# "whitespace": llama.cpp ended its process on the probe (no answers stored), and labkit raises where it would
assert probe["names"]["whitespace"].get("crashed") and "digests" not in probe["names"]["whitespace"]
whitespace_probe = labkit.load(pre_probe.write_probe_gguf("whitespace", workdir, probe["texts"]), engine="labkit")
try:
    for text in probe["texts"]:
        whitespace_probe.encode(text, parse_special=False)
except labkit.LabkitError as exc:
    assert "llama.cpp ends its process" in str(exc)
else:
    raise AssertionError("labkit served every probe text where llama.cpp ended its process")
assert all(probe_table.loc[name, "equal"] == len(probe["texts"]) for name in ("afmoe", "tiny_aya", "cohere2moe", "kimi-k2"))
print([text[s:e] for text in ["x1234567 ab 12"] for s, e in digit_groups(text)])
for name in ("afmoe", "tiny_aya", "cohere2moe"):  # tokenizers has no such step: the hf engine refuses them
    try:
        labkit.load(pre_probe.write_probe_gguf(name, workdir, probe["texts"][:1]), engine="hf")
    except labkit.LabkitError as exc:
        assert "llama.cpp's own function" in str(exc)
    else:
        raise AssertionError(f"hf served {name}")
probe_table[probe_table["documented"] > 0]

# %% [markdown]
# ## Try it
# Replace each `...` with your answer and run the cell: the checker prints `right`, or
# `wrong` with a hint that says which part is off. Worked answers:
# `notebooks/solutions/14_conformance_matrix.ipynb`.
#
# 1. Which engine does `engine=None` pick for `hf/wordlevel-fixed-length` (`"labkit"` or
#    `"hf"`)? Hint: labkit is the default only when it implements every component of the
#    file; look at the file's pre-tokenizer.

# %%
from labkit.exercises.conformance import check_default_engine, check_refused_component

by_name = {c.name: c for c in cases}
answer_1 = ...
check_default_engine(by_name["hf/wordlevel-fixed-length"], answer_1)

# %% [markdown]
# 2. Which component makes `engine="labkit"` refuse `hf/wordlevel-split-oniguruma-hex`
#    (answer like `"pre_tokenizer Digits"`, or `"none"`)? And for `hf/bpe-bytelevel-qwen2-nfc`?
#    Hint 1: the refusal names the component; `labkit.load(case.build(folder), engine="labkit")`
#    shows it. Hint 2: NFC is not a refusal reason by itself: labkit implements it.

# %%
answer_2a, answer_2b = ..., ...
check_refused_component(by_name["hf/wordlevel-split-oniguruma-hex"], answer_2a)
check_refused_component(by_name["hf/bpe-bytelevel-qwen2-nfc"], answer_2b)

# %% [markdown]
# ## Summary
# - A tokenizer.json is a pipeline; labkit now runs each component it implements exactly,
#   and the matrix above is measured, not assumed: zero silent differences.
# - What labkit cannot serve exactly (BPE dropout, a regex Oniguruma reads otherwise) is
#   refused at load with the component named,
#   and `engine=None` serves it with `tokenizers`, saying why in `repr(tok)`.
# - SentencePiece `.model` configurations run through the same runner in
#   `tests/test_conformance_spm_matrix.py`: exact or refused with `labkit`, `sentencepiece`
#   and `engine=None`; the `hf` engine refuses every `.model`, because `tokenizers`'
#   conversion differs somewhere on each configuration. `convert_model_file` gives that
#   conversion by name, for comparisons.
# - Beyond the matrix, `labkit.conformance.random_hf`, `random_spm` and `random_tiktoken`
#   draw whole configurations at random; every seed is exact, refused at load, or skipped
#   because the reference itself cannot answer. Where the reference fails on a text (a
#   `.tiktoken` byte with no rank), labkit raises a `LabkitError` instead of answering.
#   `random_legacy` does the same for `vocab.json` + `merges.txt` and `vocab.txt`, and
#   `random_gguf` compares GGUF files with llama.cpp's own stored answers: a GGUF is read as
#   llama.cpp reads it, token types adjusted by spelling and added tokens found longest first.
# - `pre_probe` measures every split name llama.cpp knows on a vocabulary whose merges cross
#   every cut: 87 served with llama.cpp's ids but three documented choices, 4 refused with why.

# %%
import shutil

shutil.rmtree(workdir, ignore_errors=True)
