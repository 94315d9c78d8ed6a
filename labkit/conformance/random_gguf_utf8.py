"""Random GGUF files of BPE over raw UTF-8 (Gemma 4's kind), compared with llama.cpp.

A "gpt2" GGUF whose split is gemma4, granite-embed-multi-311m, sarvam-moe or whitespace, a
"gemma4" GGUF (llama.cpp reads it with the gemma4 split whatever its pre key), or a
"whitespace" one (jina-embeddings-v2-base-zh: every space dropped, lowercase where the file
says, then the same BPE on each run of the rest) is not byte-level: llama.cpp merges UTF-8 characters, spells a part no token covers by ``<0xNN>``
tokens and decodes ``▁`` as a space (:mod:`labkit.algorithms.llama_bpe_utf8`). From a seed
this module draws one such file: a hand-drawn BPE vocabulary (``▁``-spelled, or plain with a
space sometimes inside a token), merges repeated or out of order, the 256 byte tokens (all,
some, none, or typed normal), runs of newlines as tokens, extra spellings from
:data:`labkit.conformance.random_gguf.POOL` typed at random, a few ordinary tokens retyped (a
byte type on a token not spelled ``<0xNN>`` included), header ids and the add_bos / add_eos /
add_space_prefix / normalizer.lowercase flags present or not. Texts mix
:func:`labkit.conformance.random_hf.random_texts` with words glued from the vocabulary's own
pieces, newline runs and the characters llama.cpp's whitespace rules tell apart.

The reference (``tools/make_random_gguf_refs.py``, llama-cpp-python 0.3.36) stores, as for the
other families, ``llama_tokenize`` with add_special and parse_special off and on, and
``llama_detokenize`` of id lists with unparse_special on and off, in
``data/gguf/random_llama_cpp_utf8.json``.

From a shell: ``python -m labkit.conformance.random_gguf --family utf8 --seeds 0:150``.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf_utf8 import draw_file
    >>> drawn = draw_file(3)
    >>> drawn.tokens == draw_file(3).tokens, drawn.model in ("gpt2", "gemma4", "whitespace")
    (True, True)
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from labkit.algorithms.llama_bpe_utf8 import UTF8_BPE_RULES
from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.conformance.random_gguf import GluedSpellings, first_spellings, random_flags
from labkit.conformance.random_gguf_spm import BYTE_TOKENS
from labkit.conformance.random_hf import random_texts

FAMILY = "utf8"
REFERENCE = "gguf/random_llama_cpp_utf8.json"
SEEDS = range(0, 150)
PRE_NAMES = tuple(UTF8_BPE_RULES)
# GGUF token types for a retyped token: control, user-defined, unused, unknown, byte
RETYPES = (3, 3, 4, 4, 5, 2, 6)
FLAGS = ("add_bos_token", "add_eos_token", "add_space_prefix", "normalizer.lowercase")
HEADER_IDS = ("bos", "eos", "unknown", "padding", "eot")
# characters llama.cpp's \S and newline rules tell apart (non-ASCII spaces, separators, controls)
SPACES = ("\u00a0", "\u3000", "\u2028", "\u2029", "\u0085", "\u200b", "\u180e", "\u1680", "\u2007", "\u202f",
          "\ufeff", "\x1c", "\x1f", "\t", "\r", "\x0b", "\x0c", "\r\n", "\n\n\n")


@dataclass
class DrawnUtf8Gguf(GluedSpellings):
    """One drawn UTF-8 BPE GGUF: what goes into the file, and how it was drawn."""

    seed: int
    model: str
    pre: str | None
    tokens: list[str]
    types: list[int]
    merges: list[str]
    flags: dict[str, bool] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    how: str = ""


def draw_file(seed: int) -> DrawnUtf8Gguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> from labkit.conformance.random_gguf_utf8 import draw_file
        >>> len(set(draw_file(5).tokens)) == len(draw_file(5).tokens)
        True
    """
    from labkit.conformance.random_gguf import POOL
    from labkit.conformance.random_vocab import hand_bpe, random_alphabet

    rng = random.Random(f"gguf-utf8-{seed}")
    model = rng.choice(("gpt2", "gpt2", "gpt2", "gemma4", "whitespace"))
    if model == "gpt2":
        pre = rng.choice(PRE_NAMES)
    else:  # gemma4 reads its own split whatever the key; whitespace's converter pins its split
        pre = rng.choice((None, None, "gemma4", "qwen2")) if model == "gemma4" else "whitespace"
    kind = rng.choice(("meta", "meta", "plain")) if pre != "whitespace" else rng.choice(("plain", "plain", "meta"))
    alphabet = random_alphabet(random.Random(f"gguf-utf8-alphabet-{seed}"))
    doc = json.loads(hand_bpe(kind, rng, alphabet))["model"]
    tokens = sorted(doc["vocab"], key=doc["vocab"].get)
    merges = [" ".join(pair) for pair in doc["merges"]]
    types = [1] * len(tokens)
    for _ in range(rng.choice((0, 0, 1, 2, 3))):  # a converter's mistakes on ordinary tokens
        types[rng.randrange(len(tokens))] = rng.choice(RETYPES)
    rows = list(zip(tokens, types))
    if rng.random() < 0.6:  # runs of newlines as tokens (Gemma 4 takes such a word whole)
        runs = ["\n" * k for k in range(1, rng.randint(2, 5))]
        rows += [(run, 1) for run in runs]
        if rng.random() < 0.5:
            merges += [f"{run} \n" for run in runs[:-1]]
    byte_shape = rng.choice(("all", "all", "all", "none", "some", "typed normal"))
    if byte_shape != "none":
        chosen = BYTE_TOKENS if byte_shape != "some" else [b for b in BYTE_TOKENS if rng.random() < 0.7]
        byte_rows = [(b, 1 if byte_shape == "typed normal" else 6) for b in chosen]
        rows = byte_rows + rows if rng.random() < 0.5 else rows + byte_rows
    if rng.random() < 0.7:
        rows = [("<unk>", 2), ("<s>", 3), ("</s>", 3), *rows]
    rows += [(rng.choice(POOL), rng.choice((1, *RETYPES[:-1]))) for _ in range(rng.randint(0, 6))]
    tokens, types = (list(column) for column in zip(*first_spellings(rows)))
    flags = random_flags(rng, FLAGS)
    ids = {key: rng.randrange(len(tokens)) for key in HEADER_IDS if rng.random() < 0.25}
    return DrawnUtf8Gguf(seed, model, pre, tokens, types, merges, flags, ids, f"{kind}, bytes {byte_shape}")


def write_file(drawn: DrawnUtf8Gguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only GGUF (``gguf.GGUFWriter``); its path.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> path = write_file(draw_file(1), Path(tempfile.mkdtemp()))
        >>> read_gguf_kv(path)["tokenizer.ggml.model"] in ("gpt2", "gemma4", "whitespace")
        True
    """
    return write_vocab_gguf(Path(folder) / f"random-utf8-{drawn.seed}.gguf", drawn.model, drawn.tokens, drawn.types,
                            arch="gemma4" if drawn.model == "gemma4" else "gpt2" if drawn.model == "gpt2" else "bert",
                            pre=drawn.pre, merges=drawn.merges,
                            ids=drawn.ids, flags=drawn.flags)


def texts_for(drawn: DrawnUtf8Gguf, count: int = 24) -> list[str]:
    """Random texts with the file's spellings glued in (a third), and words glued from its own
    pieces with ``▁`` read as a space, newline runs and llama.cpp's spaces between them.

    Example:
        >>> len(texts_for(draw_file(2)))
        24
    """
    rng = random.Random(f"gguf-utf8-texts-{drawn.seed}")
    third = count // 3
    out = random_texts(drawn.seed, drawn.spellings, third)
    pieces = [t for t, kind in zip(drawn.tokens, drawn.types) if kind == 1 and not t.startswith("<0x")] or ["a"]
    for _ in range(count - third):
        units = [rng.choice(pieces).replace("\u2581", " ") for _ in range(rng.randint(1, 12))]
        for _ in range(rng.choice((0, 1, 2))):
            units.insert(rng.randrange(len(units) + 1), rng.choice((" ", "  ", "\n", "\n\n", " \u2581", *SPACES)))
        if drawn.spellings and rng.random() < 0.4:
            units.insert(rng.randrange(len(units) + 1), rng.choice(drawn.spellings))
        out.append("".join(units))
    return out


# ----------------------------------------------------------------------------- a real vocabulary
REAL_REFERENCE = "gguf/llama_spm_as_gemma4_llama_cpp.json"


def real_vocabulary_file(folder: Path) -> Path:
    """Llama-2's 32,000 tokens (the bundled llama-spm) written as Gemma 4's converter writes a
    GGUF: tokenizer model "gemma4", the tokens with their types, the merges ``tokenizers``
    derives from the scores, BOS/EOS/UNK ids, add_bos on, add_space_prefix off.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> kv = read_gguf_kv(real_vocabulary_file(Path(tempfile.mkdtemp())))
        >>> kv["tokenizer.ggml.model"], len(kv["tokenizer.ggml.merges"])
        ('gemma4', 61249)
    """
    import labkit
    from labkit.factory import convert_model_file

    vocab = labkit.load("llama-spm").vocab
    merges = [" ".join(pair) for pair in json.loads(convert_model_file("llama-spm").backend.to_str())["model"]["merges"]]
    drawn = DrawnUtf8Gguf(0, "gemma4", None, list(vocab.tokens), list(vocab.token_types), merges,
                          {"add_bos_token": True, "add_space_prefix": False}, {"bos": 1, "eos": 2, "unknown": 0})
    return write_vocab_gguf(Path(folder) / "llama-spm-as-gemma4.gguf", "gemma4", drawn.tokens, drawn.types,
                            arch="gemma4", merges=drawn.merges, ids=drawn.ids, flags=drawn.flags)


def real_vocabulary_case(folder: Path) -> dict:
    """What llama.cpp is asked about :func:`real_vocabulary_file`: 400 lines spread through
    botchan, labkit's mixed corpus (edge cases, every whitespace character, scripts, combining
    marks, the specials' look-alikes), 300 random texts, 100 random id lists and every id.

    Example:
        >>> import tempfile
        >>> case = real_vocabulary_case(Path(tempfile.mkdtemp()))
        >>> len(case["texts"]) > 800, len(case["id_lists"][-1])
        (True, 32000)
    """
    import hashlib

    from labkit.conformance.corpus import botchan_lines, mixed_corpus
    from labkit.conformance.random_gguf import file_digest

    path = real_vocabulary_file(folder)
    specials = ("<s>", "</s>", "<unk>")
    texts = [*botchan_lines(400), *mixed_corpus(specials, botchan=0), *random_texts(7, specials, 300)]
    rng = random.Random("llama-spm-as-gemma4")
    lists = [[rng.randrange(32000) for _ in range(rng.randint(1, 12))] for _ in range(100)] + [list(range(32000))]
    return {"seed": 0, "path": str(path), "sha256": file_digest(path), "texts": texts, "id_lists": lists,
            "inputs_sha256": hashlib.sha256(json.dumps([texts, lists]).encode()).hexdigest(), "family": FAMILY}
