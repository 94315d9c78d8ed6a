"""Random PLaMo-2 GGUF files (``tokenizer.ggml.model = "plamo2"``), compared with llama.cpp.

A PLaMo-2 vocabulary is scored tokens and the 256 ``<0xNN>`` byte tokens; llama.cpp cuts a text
at the lowest total of integer scores (:mod:`labkit.algorithms.plamo2`). From a seed this module
draws one such file: a base vocabulary with scores (the same draws as
:mod:`labkit.conformance.random_gguf_spm`: a Metaspace BPE or a Unigram, scores left, tied,
zeroed, shuffled or reversed), sometimes a score that is not finite, the byte tokens in front or
behind (rarely one missing, which llama.cpp refuses), extra spellings from
:data:`labkit.conformance.random_gguf.POOL` typed at random, a few ordinary tokens retyped,
header ids and the add_bos / add_eos / add_space_prefix flags. Texts mix
:func:`labkit.conformance.random_hf.random_texts` with the vocabulary's own pieces, some
starting with a byte order mark (which llama.cpp drops).

The reference (``tools/make_random_gguf_refs.py``, llama-cpp-python 0.3.36) stores the same
answers as for the other families in ``data/gguf/random_llama_cpp_plamo2.json``.

From a shell: ``python -m labkit.conformance.random_gguf --family plamo2 --seeds 0:100``.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf_plamo2 import draw_file
    >>> drawn = draw_file(3)
    >>> drawn.tokens == draw_file(3).tokens, len(drawn.scores) == len(drawn.tokens)
    (True, True)
"""
from __future__ import annotations

import random
from pathlib import Path

from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.conformance.random_gguf import first_spellings, random_flags
from labkit.conformance.random_gguf_spm import BYTE_TOKENS, DrawnSpmGguf, base_vocabulary
from labkit.conformance.random_hf import random_texts

FAMILY = "plamo2"
REFERENCE = "gguf/random_llama_cpp_plamo2.json"
SEEDS = range(0, 100)
FLAGS = ("add_bos_token", "add_eos_token", "add_space_prefix")
HEADER_IDS = ("bos", "eos", "unknown", "padding", "eot")
# GGUF token types for a retyped token: control, user-defined, unused, unknown
RETYPES = (3, 3, 4, 4, 5, 2)


def draw_file(seed: int) -> DrawnSpmGguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> from labkit.conformance.random_gguf_plamo2 import draw_file
        >>> len(set(draw_file(5).tokens)) == len(draw_file(5).tokens)
        True
    """
    from labkit.conformance.random_gguf import POOL

    rng = random.Random(f"gguf-plamo2-{seed}")
    tokens, scores, how = base_vocabulary(seed, rng)
    if rng.random() < 0.15:  # a score that is not finite: llama.cpp never cuts that token
        scores[rng.randrange(len(scores))] = rng.choice((float("nan"), float("-inf")))
        how += ", a score not finite"
    types = [1] * len(tokens)
    for _ in range(rng.choice((0, 0, 1, 2))):
        types[rng.randrange(len(tokens))] = rng.choice(RETYPES)
    byte_rows = [(b, 0.0, 6) for b in BYTE_TOKENS]
    if rng.random() < 0.05:  # llama.cpp refuses a file without every byte token
        del byte_rows[rng.randrange(256)]
        how += ", a byte missing"
    head = [("<|plamo:unk|>", 0.0, 2), ("<|plamo:bos|>", 0.0, 3), ("<|plamo:eos|>", 0.0, 3), ("<|plamo:pad|>", 0.0, 3)]
    byte_set = set(BYTE_TOKENS)
    body = [row for row in zip(tokens, scores, types) if row[0] not in byte_set]  # the byte tokens are typed byte
    rows = head + (byte_rows + body if rng.random() < 0.5 else body + byte_rows)
    rows += [(rng.choice(POOL), rng.uniform(-20, 5), rng.choice((1, *RETYPES))) for _ in range(rng.randint(0, 5))]
    tokens, scores, types = (list(column) for column in zip(*first_spellings(rows)))
    flags = random_flags(rng, FLAGS)
    ids = {key: rng.randrange(len(tokens)) for key in HEADER_IDS if rng.random() < 0.2}
    return DrawnSpmGguf(seed, tokens, scores, types, flags, ids, None, how)


def write_file(drawn: DrawnSpmGguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only "plamo2" GGUF (``gguf.GGUFWriter``); its path.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> read_gguf_kv(write_file(draw_file(1), Path(tempfile.mkdtemp())))["tokenizer.ggml.model"]
        'plamo2'
    """
    return write_vocab_gguf(Path(folder) / f"random-plamo2-{drawn.seed}.gguf", "plamo2", drawn.tokens, drawn.types,
                            arch="plamo2", scores=drawn.scores, ids=drawn.ids, flags=drawn.flags)


def texts_for(drawn: DrawnSpmGguf, count: int = 24) -> list[str]:
    """Random texts with the file's spellings glued in (a third), and texts glued from its own
    pieces (``▁`` kept: PLaMo-2 has no whitespace rule), some starting with U+FEFF.

    Example:
        >>> len(texts_for(draw_file(2)))
        24
    """
    rng = random.Random(f"gguf-plamo2-texts-{drawn.seed}")
    third = count // 3
    out = random_texts(drawn.seed, drawn.spellings, third)
    pieces = [t for t, kind in zip(drawn.tokens, drawn.types) if kind == 1 and not t.startswith("<0x")] or ["a"]
    for _ in range(count - third):
        units = [rng.choice(pieces) for _ in range(rng.randint(1, 12))]
        if rng.random() < 0.3:
            units.insert(rng.randrange(len(units) + 1), rng.choice((" ", "\u2581", "\n", "x", "\ufeff", "é")))
        if drawn.spellings and rng.random() < 0.4:
            units.insert(rng.randrange(len(units) + 1), rng.choice(drawn.spellings))
        text = "".join(units)
        out.append("\ufeff" + text if rng.random() < 0.15 else text)
    return out
