"""Random Unigram GGUF files (``tokenizer.ggml.model = "t5"``), compared with llama.cpp.

llama.cpp's "t5" tokenizer normalises with the file's precompiled charsmap (longest key
first) and its space rules (add_space_prefix, remove_extra_whitespaces), then runs a Viterbi
search over the normal, user-defined and unused tokens, an unknown character costing the
lowest normal score minus 10, and fuses neighbouring unknowns.

From a seed this module draws one such file: a Unigram vocabulary drawn by hand
(:func:`labkit.conformance.random_vocab.hand_unigram`), t5's ``<pad>`` ``</s>`` ``<unk>`` in
front or not, byte tokens sometimes, the botchan models' ``nmt_nfkc`` / ``nfkc`` charsmap or
none, extra spellings from :data:`labkit.conformance.random_gguf.POOL` and retyped tokens,
header ids and the add_bos / add_eos / add_space_prefix / remove_extra_whitespaces keys
present or not. Texts as for :mod:`labkit.conformance.random_gguf_spm`.

The reference (``tools/make_random_gguf_refs.py``) stores what it stores for the other
families, in ``data/gguf/random_llama_cpp_ugm.json``.
From a shell: ``python -m labkit.conformance.random_gguf --family ugm``.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf_ugm import draw_file
    >>> draw_file(3).tokens == draw_file(3).tokens
    True
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.conformance.random_gguf import GluedSpellings, first_spellings, random_flags
from labkit.conformance.random_gguf_spm import BYTE_TOKENS, texts_for as spm_texts_for

FAMILY = "ugm"
REFERENCE = "gguf/random_llama_cpp_ugm.json"
# seeds 0:80, and from 1000:1400 the files where llama.cpp's normaliser splits a character (1022 ...),
# a token retyped at load keeps its user-defined score (1017, 1126), or the hf engine gave other ids
SEEDS = (*range(0, 80), 1017, 1022, 1033, 1034, 1038, 1050, 1057, 1065, 1080, 1114, 1116, 1126, 1219, 1223, 1246, 1251)
RETYPES = (3, 3, 4, 4, 5, 2)
FLAGS = ("add_bos_token", "add_eos_token", "add_space_prefix", "remove_extra_whitespaces")
HEADER_IDS = ("bos", "eos", "unknown", "padding")
CHARSMAPS = (None, None, "sentencepiece/botchan_en_bpe_1000.model", "sentencepiece/botchan_en_unigram_1000.model")


@dataclass
class DrawnUgmGguf(GluedSpellings):
    """One drawn "t5" GGUF: tokens, scores, types, charsmap, flags and header ids."""

    seed: int
    tokens: list[str]
    scores: list[float]
    types: list[int]
    charsmap: bytes | None = None
    flags: dict[str, bool] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    how: str = ""


def draw_file(seed: int) -> DrawnUgmGguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> len(set(draw_file(5).tokens)) == len(draw_file(5).tokens)
        True
    """
    from labkit.conformance.random_gguf import POOL
    from labkit.conformance.random_vocab import hand_unigram, random_alphabet
    from labkit.formats.spm_model import read_spm_model
    from labkit.paths import data_path

    rng = random.Random(f"gguf-ugm-{seed}")
    alphabet = random_alphabet(random.Random(f"gguf-ugm-alphabet-{seed}"))
    model = json.loads(hand_unigram(rng, alphabet))["model"]
    rows: list[tuple[str, float, int]] = []
    if rng.random() < 0.7:
        rows += [("<pad>", 0.0, 3), ("</s>", 0.0, 3), ("<unk>", 0.0, 2)]
    if rng.random() < 0.3:
        rows += [(b, 0.0, 6) for b in BYTE_TOKENS]
    unk = model.get("unk_id")
    rows += [(piece, float(score), 2 if index == unk else 1) for index, (piece, score) in enumerate(model["vocab"])]
    rows += [(rng.choice(POOL), rng.uniform(-12, 0), rng.choice((1, *RETYPES))) for _ in range(rng.randint(0, 5))]
    tokens, scores, types = (list(column) for column in zip(*first_spellings(rows)))
    for _ in range(rng.choice((0, 0, 1, 2))):
        types[rng.randrange(len(tokens))] = rng.choice(RETYPES)
    source = rng.choice(CHARSMAPS)
    charsmap = read_spm_model(data_path(source)).normalizer.get("charsmap") if source else None
    flags = random_flags(rng, FLAGS)
    ids = {key: rng.randrange(len(tokens)) for key in HEADER_IDS if rng.random() < 0.2}
    return DrawnUgmGguf(seed, tokens, scores, types, charsmap, flags, ids,
                        f"charsmap {source.split('_')[2] if source else 'none'}")


def write_file(drawn: DrawnUgmGguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only "t5" GGUF (``gguf.GGUFWriter``); its path.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> read_gguf_kv(write_file(draw_file(1), Path(tempfile.mkdtemp())))["tokenizer.ggml.model"]
        't5'
    """
    return write_vocab_gguf(Path(folder) / f"random-ugm-{drawn.seed}.gguf", "t5", drawn.tokens, drawn.types,
                            pre="default", scores=drawn.scores, charsmap=drawn.charsmap, ids=drawn.ids, flags=drawn.flags)


def texts_for(drawn: DrawnUgmGguf, count: int = 20) -> list[str]:
    """Random texts with the file's spellings glued in, and words glued from its pieces.

    Example:
        >>> len(texts_for(draw_file(2)))
        20
    """
    return spm_texts_for(drawn, count)
