# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 11 · Files, formats and the Hub: what `labkit.load` does
#
# A tokenizer arrives as a file: a llama.cpp GGUF, a `tokenizer.json`, a SentencePiece
# `.model`, a `.tiktoken` rank list, or a folder of them downloaded from the Hugging Face
# Hub. `labkit.load` turns any of them into the same Tokenizer in three steps:
# **detect** (what is this file?), **read** (plain data: tokens, scores, merges, specials),
# **build** (an engine). This notebook opens each step.
#
# **Learning goals**
# - tell a file's format from its first bytes, not its name;
# - read the anatomy of a GGUF vocabulary and of a `tokenizer.json`;
# - know how model names route to files, and how the Hub loader fetches tokenizer files
#   only, caches them, and fails cleanly when the network does.

# %%
import json
import os
import shutil
import struct
import tempfile
from pathlib import Path

import pandas as pd

from labkit.formats.detect import sniff
from labkit.formats.gguf import read_gguf_kv
from labkit.paths import BUNDLED, MODEL_ALIASES, data_dir

DATA = data_dir()

# %% [markdown]
# ## 1. Sniffing: the first bytes tell
#
# Every format has a signature. A GGUF file starts with the magic `GGUF` and a version; a
# SentencePiece model is a protobuf whose first field is a piece (`0x0a`, a length, a
# UTF-8 string); a `.tiktoken` file is lines of `base64 rank`; JSON starts with `{`
# (perhaps after a UTF-8 byte-order mark) and its keys say which JSON it is.

# %%
files = ["gguf/ggml-vocab-gpt-2.gguf", "gguf/ggml-vocab-qwen2.gguf", "sentencepiece/botchan_en_unigram_1000.model",
         "tiktoken/cl100k_base.tiktoken", "hf/all-MiniLM-L6-v2/tokenizer.json",
         "hf/all-MiniLM-L6-v2/tokenizer_config.json", "hf/all-MiniLM-L6-v2/vocab.txt"]
rows = []
for name in files:
    head = (DATA / name).read_bytes()[:12]
    rows.append({"file": name, "first bytes (hex)": head.hex(" "), "as text": head.decode("latin-1").encode("unicode_escape").decode(),
                 "sniffed": sniff(DATA / name)})
sniffed = pd.DataFrame(rows)
sniffed

# %% [markdown]
# The extension is only a hint: a GGUF renamed to `.json` is still a GGUF, and a
# `tokenizer.json` saved with a byte-order mark is still JSON.

# %%
scratch = Path(tempfile.mkdtemp(prefix="labkit-nb11-"))
disguised = scratch / "looks_like.json"
shutil.copy(DATA / "gguf/ggml-vocab-gpt-2.gguf", disguised)
with_bom = scratch / "tokenizer.json"
with_bom.write_bytes(b"\xef\xbb\xbf" + (DATA / "hf/all-MiniLM-L6-v2/tokenizer.json").read_bytes())
assert sniff(disguised) == "gguf" and sniff(with_bom) == "hf_json"
print(disguised.name, "->", sniff(disguised), "|", with_bom.name, "(BOM) ->", sniff(with_bom))
print(labkit.load(disguised, engine="hf").encode("Hello world").ids)

# %% [markdown]
# ## 2. Anatomy of a GGUF vocabulary
#
# GGUF is a little-endian container: `GGUF`, a u32 version, u64 tensor count, u64
# key/value count, then the key/values (a u64-length key, a u32 value type, the value;
# arrays carry an item type and a u64 count), then tensor infos and data. The vocab-only
# files of llama.cpp's test suite have no tensors, only `tokenizer.ggml.*` keys.

# %%
raw = (DATA / "gguf/ggml-vocab-qwen2.gguf").read_bytes()
magic, version, n_tensors, n_kv = raw[:4], *struct.unpack_from("<IQQ", raw, 4)
print(f"magic={magic!r} version={version} tensors={n_tensors} key/values={n_kv}")
kv = read_gguf_kv(DATA / "gguf/ggml-vocab-qwen2.gguf")
anatomy = pd.DataFrame([
    {"key": k, "type": type(v).__name__, "size": len(v) if isinstance(v, (list, str)) else 1,
     "value": (repr(v[:3])[:60] + " ...") if isinstance(v, list) else repr(v)[:60]}
    for k, v in kv.items() if not k.startswith("GGUF.")
])
assert (version, n_tensors) == (3, 0)
anatomy

# %% [markdown]
# `tokenizer.ggml.token_type` uses sentencepiece's numbering (1 normal, 2 unknown,
# 3 control, 4 user-defined, 5 unused, 6 byte). In Qwen2 the chat tokens are *control*
# tokens; merges are stored as `"left right"` strings in the GPT-2 byte spelling.

# %%
from collections import Counter
from labkit.core import TOKEN_TYPE_NAMES

types = Counter(kv["tokenizer.ggml.token_type"])
print({TOKEN_TYPE_NAMES[t]: n for t, n in sorted(types.items())})
print("first merges:", kv["tokenizer.ggml.merges"][:5])
print("control tokens:", [kv["tokenizer.ggml.tokens"][i] for i, t in enumerate(kv["tokenizer.ggml.token_type"]) if t == 3][:4])

# %% [markdown]
# The stored types are not the last word. When llama.cpp loads a GGUF it adjusts them by
# spelling (converters often typed them wrongly): every token spelled like an end of
# generation becomes a control token, fill-in-the-middle tokens too, gpt-oss's `<|channel|>`
# family becomes user-defined, and a few models' special tokens swallow neighbouring spaces.
# labkit applies the same rules, transcribed from llama.cpp's `src/llama-vocab.cpp` and
# measured against llama.cpp itself (`labkit/formats/gguf_attributes.py`; notebook 14 has
# the measurement). In Qwen2's file one ordinary token changes:

# %%
from labkit.formats.gguf_attributes import CONTROL, NORMAL, llama_cpp_attributes

attributes = llama_cpp_attributes(kv, kv["tokenizer.ggml.tokens"], kv["tokenizer.ggml.token_type"], "gpt2")
changed = {kv["tokenizer.ggml.tokens"][i]: (TOKEN_TYPE_NAMES[t], f"attribute bits {attributes.flags[i]}")
           for i, t in enumerate(kv["tokenizer.ggml.token_type"]) if t == 1 and attributes.flags[i] != NORMAL}
print(changed)
assert list(changed) == ["</s>"] and attributes.flags[128247] == NORMAL | CONTROL

# %% [markdown]
# `tokenizer.ggml.model` names the algorithm. labkit reads nine of llama.cpp's values, each
# run by an engine of its own that follows llama.cpp's loop and is measured against llama.cpp
# on random files of that kind (`python -m labkit.conformance.random_gguf --family ...`,
# notebook 14). Which split a BPE file names can change the engine too: Gemma 4's names are
# BPE over UTF-8 characters, not bytes (notebook 03 §8). "hybriddna" (a DNA language model)
# is byte-level BPE for text, and reads a DNA sequence between `<dna>` and `</dna>` six
# letters at a time; the converter spells each k-mer token with a private-use suffix so that
# `CCCCCC` the k-mer and `CCCCCC` the BPE token keep ids of their own.

# %%
from labkit.conformance.random_gguf import FAMILIES, family_module
from labkit.formats.gguf import GGUF_MODEL_FAMILIES

# one random file of each kind, loaded: which engine class serves each tokenizer model
served_by = {}
random_folder = Path(tempfile.mkdtemp())
for family in FAMILIES:
    module = family_module(family)
    for seed in range(30):
        path = module.write_file(module.draw_file(seed), random_folder)
        model = read_gguf_kv(path)["tokenizer.ggml.model"]
        if model not in served_by:
            try:
                served_by[model] = (GGUF_MODEL_FAMILIES[model], type(labkit.load(path, engine="labkit")).__name__, family)
            except labkit.LabkitError:
                continue
models = pd.DataFrame([(model, *served_by[model]) for model in GGUF_MODEL_FAMILIES],
                      columns=["tokenizer.ggml.model", "labkit family", "engine class", "random_gguf --family"])
print(models.to_string(index=False))
assert set(GGUF_MODEL_FAMILIES) == set(served_by) == {"gpt2", "gemma4", "whitespace", "hybriddna", "llama", "bert", "t5",
                                                       "rwkv", "plamo2"}

# %% [markdown]
# The DNA reading on a random hybriddna file (the three tags typed control, as the converter
# types them; with `parse_special=False` the tags are read from the text, as llama.cpp does):

# %%
from labkit.conformance import random_gguf_dna

drawn = next(d for d in map(random_gguf_dna.draw_file, range(50))
             if d.how == "all tags, 0 k-mers before <oov>" and len(d.kmers) > 50
             and all(d.types[d.tokens.index(tag)] == 3 for tag in ("<dna>", "</dna>", "<oov>")))
dna_tok = labkit.load(random_gguf_dna.write_file(drawn, random_folder), engine="labkit")
dna_text = "DNA: <dna>" + "".join(drawn.kmers[:2]).lower() + "ac</dna> end"
encoding = dna_tok.encode(dna_text, parse_special=False)
print(pd.DataFrame({"text": [dna_text[a:b] for a, b in encoding.offsets], "id": encoding.ids,
                    "decodes to": [dna_tok.decode([i], skip_special_tokens=False) for i in encoding.ids]}).to_string(index=False))
# upper-cased, cut every six letters, the short last one filled up with A: a k-mer token, or <oov>
spelled = {token: index for index, token in enumerate(drawn.tokens)}
open_at = encoding.ids.index(spelled["<dna>"])
assert encoding.ids[open_at + 1:open_at + 5] == [spelled.get(kmer + "\ue000", spelled["<oov>"])
                                                 for kmer in (*drawn.kmers[:2], "ACAAAA")] + [spelled["</dna>"]]

# %% [markdown]
# `gguf.GGUFReader` (the reference reader) maps the whole file and builds every string of
# every array field by field; labkit reads the header with `struct` directly. Both give
# the same values (tested key by key in `tests/test_formats.py`); the time differs a lot.

# %% tags=["nbval-ignore-output"]
import time
import gguf

path = DATA / "gguf/ggml-vocab-bert-bge.gguf"
started = time.perf_counter(); reference = gguf.GGUFReader(path); t_ref = time.perf_counter() - started
started = time.perf_counter(); ours = read_gguf_kv(path); t_ours = time.perf_counter() - started
print(f"gguf.GGUFReader: {t_ref:.2f} s   labkit.read_gguf_kv: {t_ours:.3f} s   ({t_ref / t_ours:.0f}x)")

# %% [markdown]
# ## 3. Anatomy of a tokenizer.json
#
# `tokenizers` serialises the whole pipeline: normalizer, pre-tokenizer, model (with its
# vocab and merges), post-processor (BOS/EOS or CLS/SEP), decoder, added tokens — and
# padding and truncation, a trap: all-MiniLM-L6-v2 ships with both on, so every encoding
# comes out 128 ids long unless they are turned off.

# %%
doc = json.loads((DATA / "hf/all-MiniLM-L6-v2/tokenizer.json").read_text(encoding="utf-8"))
summary = {k: (v.get("type", json.dumps(v)[:60]) if isinstance(v, dict) else (f"{len(v)} entries" if isinstance(v, list) else v))
           for k, v in doc.items()}
summary["model.vocab"] = f"{len(doc['model']['vocab'])} entries"
assert doc["padding"]["strategy"] == {"Fixed": 128} and doc["truncation"]["max_length"] == 128
pd.Series(summary, name="tokenizer.json").to_frame()

# %%
import tokenizers
raw_tokenizer = tokenizers.Tokenizer.from_file(str(DATA / "hf/all-MiniLM-L6-v2/tokenizer.json"))
as_shipped = raw_tokenizer.encode("Hello world", add_special_tokens=False).ids
labkit_ids = labkit.load("minilm", engine="hf").encode("Hello world").ids
print("as shipped:", len(as_shipped), "ids, ending", as_shipped[-3:], "| labkit (padding off):", labkit_ids)
assert len(as_shipped) == 128 and labkit_ids == [7592, 2088]

# %% [markdown]
# ## 4. From names to files
#
# Bundled names point into `data/`; OpenAI model names route to their encoding the way
# tiktoken's table does; anything of the form `org/model` is a Hub id.

# %%
routing = pd.DataFrame([{"name": n, "bundled as": MODEL_ALIASES.get(n, n), "file": BUNDLED[MODEL_ALIASES.get(n, n)]}
                        for n in ["gpt-4", "gpt-3.5-turbo", "text-embedding-ada-002", "davinci", "gpt2", "qwen2", "minilm"]])
assert labkit.load("gpt-4").vocab_size == labkit.load("cl100k_base").vocab_size
routing

# %% [markdown]
# ## 5. The Hub, on this machine
#
# `labkit.load("org/model")` asks `huggingface_hub` which commit and files the repo has,
# then fetches the tokenizer files only (`tokenizer.json`, `tokenizer_config.json`,
# `*.model`, `*.tiktoken`, ... never weights) into the standard cache, honouring
# `HF_ENDPOINT`, `HF_TOKEN` and `HF_HUB_OFFLINE`. labkit does the transfer itself so that
# its limits hold during it: a size cap per file, a timeout per request, a deadline for the
# call, the token sent to the Hub's own host only, the sha256 checked against the ETag. To
# show it without the internet, labkit ships a tiny Hub (`labkit.formats.hub_server.LocalHub`)
# that answers the same three calls on 127.0.0.1. The repo below also holds "weights".

# %%
from labkit.formats.hub_server import LocalHub

os.environ["HF_HOME"] = str(scratch / "hf-home")
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ.pop("HF_HUB_OFFLINE", None)
from huggingface_hub.utils import logging as hf_logging
hf_logging.set_verbosity_error()  # its retry warnings would clutter the page
minilm_files = {n: (DATA / "hf/all-MiniLM-L6-v2" / n).read_bytes() for n in ("tokenizer.json", "tokenizer_config.json", "vocab.txt")}
repos = {"demo/minilm": {**minilm_files, "model.safetensors": b"\0" * 100_000, "config.json": b"{}"}}

hub = LocalHub(repos).start()
os.environ["HF_ENDPOINT"] = hub.url
tok = labkit.load("demo/minilm")
print("fetched:", sorted(hub.fetched()))
assert "model.safetensors" not in hub.fetched()
print(tok.encode("The Hub, on this machine.").tokens)

# %% [markdown]
# With the server stopped, a second load is served from the cache:

# %%
hub.stop()
again = labkit.load("demo/minilm")
assert again.encode("cached").ids == tok.encode("cached").ids
cache_files = sorted(str(p.relative_to(scratch / "hf-home")) for p in (scratch / "hf-home").rglob("*")
                     if p.is_file() and ".locks" not in p.parts and "blobs" not in p.parts)
cache_files

# %% [markdown]
# A connection that drops in the middle of a file (the server below sends 50 KB of
# `tokenizer.json`, then hangs up, every time) gives one clear error, after two retries,
# and leaves nothing in the cache that a later load would trust: files arrive in a folder
# private to the call, renamed into the cache only when complete.

# %%
flaky = LocalHub({"demo/flaky": dict(minilm_files)}, drop_after={("demo/flaky", "tokenizer.json"): 50_000}).start()
flaky_url = os.environ["HF_ENDPOINT"] = flaky.url
try:
    labkit.load("demo/flaky")
except labkit.LabkitError as exc:
    message = str(exc)
flaky.stop()
print(message.replace(flaky_url, "http://127.0.0.1:PORT"))
leftover = [p for p in (scratch / "hf-home").rglob("*") if "flaky" in str(p) and p.is_file() and ".locks" not in p.parts]
assert "partial files were removed" in message and leftover == []

# %% [markdown]
# ## 6. And back out: export to tokenizer.json
#
# Any loaded tokenizer (a GGUF, a `.model`, a `.tiktoken`) can be exported to a folder: a
# `tokenizer.json` that the `tokenizers` library loads and that gives the same ids, and a
# `tokenizer_config.json` with the named special tokens and the chat template. A
# tokenizer.json cannot say everything a SentencePiece `.model` means (its offsets and its
# decoding differ from `tokenizers`' in corner cases), so the export also copies the source
# file and names it in `tokenizer_config.json`: `labkit.load(folder)` then gives exactly what
# the exported tokenizer gave, with the default engine.

# %%
from labkit.engines.hf_export import export_tokenizer_json

cl100k = labkit.load("cl100k_base")
exported = export_tokenizer_json(cl100k, scratch / "cl100k")
reloaded = tokenizers.Tokenizer.from_file(str(exported))
sample = "Tokenizers turn text into ids: 12345 🤗 naïve café"
assert reloaded.encode(sample, add_special_tokens=False).ids == cl100k.encode(sample).ids
print(exported.name, f"{exported.stat().st_size / 1e6:.1f} MB;", reloaded.encode(sample, add_special_tokens=False).ids)

# %%
botchan = labkit.load("botchan-unigram")
folder = scratch / "botchan-export"
export_tokenizer_json(botchan, folder)
again = labkit.load(folder)  # the default engine, as a user would
print(sorted(p.name for p in folder.iterdir()))
print(again.engine, again.encode("Hello world").tokens)
lines = [line for line in (labkit.paths.data_path("corpus/botchan.txt").read_text(encoding="utf-8").splitlines()) if line][:500]
same = sum((again.encode(line).ids, again.encode(line).offsets) == (botchan.encode(line).ids, botchan.encode(line).offsets)
           for line in lines)
print(f"{same} of {len(lines)} botchan lines: identical ids and offsets after the round trip")
assert same == len(lines)
assert again.encode("Hello world").tokens == botchan.encode("Hello world").tokens == ["▁He", "ll", "o", "▁world"]

# %%
shutil.rmtree(scratch, ignore_errors=True)
for key in ("HF_ENDPOINT", "HF_HOME", "HF_HUB_DISABLE_PROGRESS_BARS"):
    os.environ.pop(key, None)

# %% [markdown]
# ## Try it
#
# Replace each `...` with your answer and run the cell: the checker prints `right`, or
# `wrong` with a hint that says which part is off. Worked answers:
# `notebooks/solutions/11_factory_formats_hub.ipynb`.
#
# 1. Truncate a copy of `ggml-vocab-gpt-2.gguf` to 1,000 bytes (write it in a temporary
#    folder, not in `data/`) and load it: what does the error say, and where?
#    Hint 1: catch `labkit.LabkitError as exc`. Hint 2: pass `str(exc)`, the message itself.

# %%
from labkit.exercises.formats import check_error_names_file_and_place, check_private_repo, check_sniff

truncated_path, message = ..., ...
check_error_names_file_and_place(truncated_path, message)

# %% [markdown]
# 2. Flip one byte of `botchan_en_unigram_1000.model` at offset 0 (in a copy) and sniff the
#    copy: which format does labkit say (`"unknown"` if it cannot tell)? Hint 1: a `.model`
#    is recognised by its first byte, the protobuf tag `0x0a` of its first piece. Hint 2:
#    the name of the file does not count, only its bytes.

# %%
flipped_path, answer_format = ..., ...
check_sniff(flipped_path, answer_format)

# %% [markdown]
# 3. Start a `LocalHub` with a private repo (`LocalHub({"me/tok": files}, private={"me/tok"},
#    token="secret")`, `files` can be `minilm_files` of section 5) and load `"me/tok"` from it with and
#    without `os.environ["HF_TOKEN"] = "secret"`: did each load work (`True`/`False`)?
#    Hint 1: point `HF_ENDPOINT` at the hub's URL, as section 5 does. Hint 2: remove
#    `HF_TOKEN` again afterwards, and stop the hub.

# %%
loaded_without_token, loaded_with_token = ..., ...
check_private_repo(loaded_without_token, loaded_with_token)

# %% [markdown]
# ## Summary
#
# - A file's format is in its first bytes: GGUF magic, a protobuf piece, base64 lines, JSON keys.
# - A GGUF vocabulary is a header of typed key/values: tokens, token types, scores or merges,
#   special ids, flags, sometimes a chat template; reading it with `struct` is fast.
# - `tokenizer.json` is a serialised pipeline, padding and truncation included.
# - The Hub loader fetches tokenizer files only, caches them, and on failure removes what it
#   left behind, so the cache never serves a partial download.
