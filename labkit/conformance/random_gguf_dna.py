"""Random "hybriddna" GGUF files (byte-level BPE, and DNA read as 6-mers), compared with llama.cpp.

HybridDNA's converter writes its base model's byte-level BPE, the tags ``<dna>``, ``</dna>``
and ``<oov>``, and one token per k-mer spelled k-mer + U+E000 (see
:mod:`labkit.algorithms.dna_kmers`). From a seed this module draws one such file: a
random byte-level vocabulary with its merges and a split from every byte-level name (as
:mod:`labkit.conformance.random_gguf` draws them), each tag present or missing and typed
normal, control or user-defined, k-mers over ``ACGT`` (some over other letters, one with a
two-byte character, one the same letters as a BPE token), sometimes a few placed before
``<oov>`` (llama.cpp shortens only the ones after it) or the bare suffix as a token, unused
``[PADn]`` tokens, and the add_bos / add_eos flags present or not. Texts: DNA between tags in
upper and lower case, with letters no k-mer has, a character of several bytes, an empty
sequence, a ``</dna>`` missing or doubled, a tag inside a sequence, around random text with the
file's spellings glued in.

The reference (``tools/make_random_gguf_refs.py``, llama-cpp-python 0.3.36) stores, as for the
other families, ``llama_tokenize`` with add_special and parse_special off and on, and
``llama_detokenize`` of id lists, in ``data/gguf/random_llama_cpp_dna.json``.

From a shell: ``python -m labkit.conformance.random_gguf --family dna --seeds 0:150``.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf_dna import draw_file
    >>> drawn = draw_file(3)
    >>> drawn.tokens == draw_file(3).tokens, len(set(drawn.tokens)) == len(drawn.tokens)
    (True, True)
"""
from __future__ import annotations

import json
import random
import unicodedata
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

from labkit.conformance.gguf_pretypes import NFC_PRE_TYPES, write_vocab_gguf
from labkit.conformance.random_gguf import PRE_NAMES, first_spellings, glued_spellings, random_flags
from labkit.conformance.random_hf import random_texts
from labkit.conformance.random_vocab import random_vocabulary
from labkit.algorithms.dna_kmers import DNA_CLOSE, DNA_OOV, DNA_OPEN, KMER_BYTES, KMER_MARKER

FAMILY = "dna"
REFERENCE = "gguf/random_llama_cpp_dna.json"
SEEDS = range(0, 150)
FLAGS = ("add_bos_token", "add_eos_token")
# a tag's type: normal, control (what the converter writes for a special added token), user-defined
TAG_TYPES = (1, 3, 3, 3, 4)
ALL_KMERS = ["".join(letters) for letters in product("ACGT", repeat=KMER_BYTES)]


@dataclass
class DrawnDnaGguf:
    """One drawn hybriddna GGUF: what goes into the file, and how it was drawn."""

    seed: int
    pre: str
    tokens: list[str]
    types: list[int]
    merges: list[str]
    flags: dict[str, bool] = field(default_factory=dict)
    how: str = ""

    @property
    def spellings(self) -> list[str]:
        """What the texts glue in: every token not typed normal or byte, the pool's, the tags."""
        return list(dict.fromkeys([*glued_spellings(self.tokens, self.types), DNA_OPEN, DNA_CLOSE]))

    @property
    def kmers(self) -> list[str]:
        """The k-mers the file spells (without their suffix)."""
        return [t[:-1] for t in self.tokens if t.endswith(KMER_MARKER) and t != KMER_MARKER]


def draw_file(seed: int) -> DrawnDnaGguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> drawn = draw_file(1)
        >>> all(len(kmer.encode()) == 6 for kmer in drawn.kmers)
        True
    """
    rng = random.Random(f"gguf-dna-{seed}")
    doc = json.loads(random_vocabulary("byte", seed)[0])
    vocab = doc["model"]["vocab"]
    base = sorted(vocab, key=vocab.get)
    merges = [m if isinstance(m, str) else " ".join(m) for m in doc["model"]["merges"]]
    rows = [(token, 1) for token in base]
    missing = rng.choice((None, None, None, None, None, None, DNA_OPEN, DNA_CLOSE, DNA_OOV))
    tags = [(tag, rng.choice(TAG_TYPES)) for tag in (DNA_OPEN, DNA_CLOSE, DNA_OOV) if tag != missing]
    kmers = rng.sample(ALL_KMERS, rng.randint(20, 300))
    kmers += ["".join(rng.choice("ACGTN") for _ in range(KMER_BYTES)) for _ in range(rng.randint(0, 8))]
    if rng.random() < 0.4:
        kmers.append("AéGTA")  # six bytes, one character of two
    letters = [t for t in base if len(t) == KMER_BYTES and t.isascii() and t.isupper()]
    if letters and rng.random() < 0.5:
        kmers.append(rng.choice(letters))  # the same letters as a BPE token
    rows_kmers = [(kmer + KMER_MARKER, 1) for kmer in kmers]
    before = rng.choice((0, 0, 0, 3))  # k-mers before <oov> keep their suffix when decoded
    extra = [("\ue000", 1)] if rng.random() < 0.2 else []
    pads = [(f"[PAD{k}]", 5) for k in range(rng.choice((0, 0, 2)))]  # unused, as the converter fills gaps
    rows += rows_kmers[:before] + tags + extra + rows_kmers[before:] + pads
    tokens, types = (list(column) for column in zip(*first_spellings(rows)))
    how = f"missing {missing}" if missing else "all tags"
    return DrawnDnaGguf(seed, rng.choice(PRE_NAMES), tokens, types, merges, random_flags(rng, FLAGS),
                        f"{how}, {before} k-mers before <oov>")


def write_file(drawn: DrawnDnaGguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only GGUF (``gguf.GGUFWriter``); its path.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> read_gguf_kv(write_file(draw_file(1), Path(tempfile.mkdtemp())))["tokenizer.ggml.model"]
        'hybriddna'
    """
    return write_vocab_gguf(Path(folder) / f"random-dna-{drawn.seed}.gguf", "hybriddna", drawn.tokens, drawn.types,
                            arch="llama", pre=drawn.pre, merges=drawn.merges, flags=drawn.flags)


def dna_text(rng: random.Random, kmers: list[str]) -> str:
    """One sequence between tags: k-mers the file has (in either case), letters it has none
    for, sometimes a character of several bytes, a space or a tag inside.

    Example:
        >>> dna_text(random.Random(1), ["ACGTAC"]).strip("ACGTacgtNnXé日 <>/dna") == ""
        True
    """
    parts = []
    for _ in range(rng.randint(0, 5)):
        kmer = rng.choice(kmers) if kmers and rng.random() < 0.7 else "".join(rng.choice("ACGTN") for _ in range(6))
        parts.append(kmer.lower() if rng.random() < 0.3 else kmer)
    if rng.random() < 0.4:
        parts.append("".join(rng.choice("ACGTacgt") for _ in range(rng.randint(1, 5))))  # a short last k-mer
    if rng.random() < 0.2:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(("é", "日", " ", "X", DNA_OPEN, "<d")))
    return "".join(parts)


def texts_for(drawn: DrawnDnaGguf, count: int = 24) -> list[str]:
    """Random texts with the file's spellings glued in (a quarter), and text around DNA between
    tags (a ``</dna>`` sometimes missing or doubled); less what labkit documents as following the
    model's own tokenizer instead of llama.cpp (as :func:`labkit.conformance.random_gguf.texts_for`).

    Example:
        >>> 20 <= len(texts_for(draw_file(2))) <= 24
        True
    """
    rng = random.Random(f"gguf-dna-texts-{drawn.seed}")
    quarter = count // 4
    out = random_texts(drawn.seed, drawn.spellings, quarter)
    words = random_texts(drawn.seed + 1000, [], count)
    for index in range(count - quarter):
        units = []
        for _ in range(rng.randint(1, 3)):
            units.append(rng.choice(words)[: rng.randint(0, 12)])
            close = rng.choice((DNA_CLOSE, DNA_CLOSE, DNA_CLOSE, "", DNA_CLOSE + DNA_CLOSE))
            units.append(DNA_OPEN + dna_text(rng, drawn.kmers) + close)
        units.append(rng.choice(words)[: rng.randint(0, 12)])
        out.append("".join(units))
    nfc = drawn.pre in NFC_PRE_TYPES
    return [t for t in out if "\u017f" not in t and not (nfc and unicodedata.normalize("NFC", t) != t)]
