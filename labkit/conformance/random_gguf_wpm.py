"""Random WordPiece GGUF files (``tokenizer.ggml.model = "bert"``), compared with llama.cpp.

llama.cpp stores a WordPiece vocabulary with a "phantom space": a word-initial piece ``w`` as
``▁w``, a continuation ``##w`` as ``w``, ``[..]`` tokens as they are. It normalises the text
its own way (lowercase and strip_accents from the header, its own Unicode tables, a
one-code-point "NFD"), splits words at whitespace and punctuation, and matches each word,
with ``▁`` in front, greedily longest first against every token.

From a seed this module draws one such file: a WordPiece vocabulary drawn by hand
(:func:`labkit.conformance.random_vocab.hand_wordpiece`) written in that spelling, the BERT
specials ``[PAD]`` ``[UNK]`` ``[CLS]`` ``[SEP]`` ``[MASK]`` at BERT's ids (behind 99
``[unusedN]``) or at the front with header ids, extra spellings from
:data:`labkit.conformance.random_gguf.POOL` and retyped tokens, and the lowercase /
strip_accents keys present or not. Texts mix :func:`labkit.conformance.random_hf.random_texts`
with words glued from the vocabulary's pieces (one of them longer than 100 characters).

The reference (``tools/make_random_gguf_refs.py``, llama-cpp-python 0.3.36) stores what it
stores for :mod:`labkit.conformance.random_gguf_spm`, in ``data/gguf/random_llama_cpp_wpm.json``.
From a shell: ``python -m labkit.conformance.random_gguf --family wpm``.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf_wpm import draw_file
    >>> drawn = draw_file(3)
    >>> drawn.tokens == draw_file(3).tokens, "[UNK]" in drawn.tokens
    (True, True)
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.conformance.random_gguf import first_spellings, random_flags
from labkit.conformance.random_hf import random_texts

FAMILY = "wpm"
REFERENCE = "gguf/random_llama_cpp_wpm.json"
SEEDS = range(0, 100)
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
RETYPES = (1, 3, 3, 4, 4, 5, 2)
FLAGS = ("normalizer.lowercase", "normalizer.strip_accents")
# header keys llama.cpp reads for a bert model (the cls key it does not read)
HEADER_IDS = {"bos": "[CLS]", "seperator": "[SEP]", "unknown": "[UNK]", "padding": "[PAD]", "mask": "[MASK]",
              "cls": "[CLS]"}


@dataclass
class DrawnWpmGguf:
    """One drawn "bert" GGUF: its tokens in llama.cpp's spelling, types, header ids and flags."""

    seed: int
    tokens: list[str]
    types: list[int]
    flags: dict[str, bool] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    how: str = ""

    @property
    def spellings(self) -> list[str]:
        """The tokens the texts glue in: every one not typed normal, and the pool's."""
        from labkit.conformance.random_gguf import POOL

        return [t for t, kind in zip(self.tokens, self.types) if kind != 1 or t in POOL]


def phantom_spelling(piece: str) -> str:
    """A vocab.txt piece as llama.cpp's converter writes it: ``##w`` -> ``w``, ``[X]`` as is, ``w`` -> ``▁w``.

    Example:
        >>> [phantom_spelling(p) for p in ("##ing", "[CLS]", "the")]
        ['ing', '[CLS]', '▁the']
    """
    if piece.startswith("##") and len(piece) > 2:
        return piece[2:]
    if piece.startswith("[") and piece.endswith("]"):
        return piece
    return "\u2581" + piece


def draw_file(seed: int) -> DrawnWpmGguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> len(set(draw_file(5).tokens)) == len(draw_file(5).tokens)
        True
    """
    from labkit.conformance.random_gguf import POOL
    from labkit.conformance.random_vocab import hand_wordpiece, random_alphabet

    rng = random.Random(f"gguf-wpm-{seed}")
    alphabet = random_alphabet(random.Random(f"gguf-wpm-alphabet-{seed}"))
    pieces = list(json.loads(hand_wordpiece(rng, alphabet))["model"]["vocab"])
    bert_ids = rng.random() < 0.5
    if bert_ids:  # as bert-base: [PAD], [unused0..98], [UNK] [CLS] [SEP] [MASK] at 100..103
        head = ["[PAD]", *(f"[unused{k}]" for k in range(99)), "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        head_types = [3] + [1] * 99 + [3] * 4
    else:
        head = list(SPECIALS)
        head_types = [3] * 5
    extra = [(rng.choice(POOL), rng.choice(RETYPES)) for _ in range(rng.randint(0, 4))]
    rows = first_spellings([*zip(head, head_types), *((phantom_spelling(p), 1) for p in pieces), *extra])
    tokens, types = (list(column) for column in zip(*rows))
    for _ in range(rng.choice((0, 0, 1, 2))):
        types[rng.randrange(len(tokens))] = rng.choice(RETYPES)
    ids = {}
    for key, spelling in HEADER_IDS.items():
        if rng.random() < (0.3 if bert_ids else 0.8):
            ids[key] = tokens.index(spelling) if rng.random() < 0.9 else rng.randrange(len(tokens))
    flags = random_flags(rng, FLAGS)
    return DrawnWpmGguf(seed, tokens, types, flags, ids, "bert ids" if bert_ids else "specials first")


def write_file(drawn: DrawnWpmGguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only "bert" GGUF (``gguf.GGUFWriter``); its path.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> read_gguf_kv(write_file(draw_file(1), Path(tempfile.mkdtemp())))["tokenizer.ggml.model"]
        'bert'
    """
    return write_vocab_gguf(Path(folder) / f"random-wpm-{drawn.seed}.gguf", "bert", drawn.tokens, drawn.types,
                            pre="default", ids=drawn.ids, flags=drawn.flags)


def texts_for(drawn: DrawnWpmGguf, count: int = 20) -> list[str]:
    """Random texts with the file's spellings glued in (half), and words glued from its pieces
    (half, one with a word longer than 100 characters).

    Example:
        >>> len(texts_for(draw_file(2)))
        20
    """
    rng = random.Random(f"gguf-wpm-texts-{drawn.seed}")
    half = count // 2
    out = random_texts(drawn.seed, drawn.spellings, half)
    starts = [t[1:] for t, kind in zip(drawn.tokens, drawn.types) if t.startswith("\u2581") and len(t) > 1]
    rest = [t for t, kind in zip(drawn.tokens, drawn.types) if kind == 1 and not t.startswith(("\u2581", "["))]
    for index in range(count - half):
        words = []
        for _ in range(rng.randint(1, 8)):
            word = rng.choice(starts) if starts else ""
            word += "".join(rng.choice(rest) for _ in range(rng.randint(0, 3))) if rest else ""
            words.append(word)
        if index == 0 and words:
            words[0] = (words[0] * 120)[:130]  # past tokenizers' 100 characters a word
        if drawn.spellings and rng.random() < 0.4:
            words.insert(rng.randrange(len(words) + 1), rng.choice(drawn.spellings))
        out.append(rng.choice((" ", " ", "  ", "\n", ", ")).join(words))
    return out
