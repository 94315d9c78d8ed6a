"""Random RWKV GGUF files (``tokenizer.ggml.model = "rwkv"``), compared with llama.cpp.

An RWKV vocabulary is byte strings, written escaped as Python writes a bytes literal, matched
greedily longest-first (:mod:`labkit.algorithms.rwkv_trie`). From a seed this module draws one
file as llama.cpp's converter writes it (``<s>`` first as a control token, ``[PADn]`` unused
tokens at the end) with: the 256 single bytes (all, or some with an unknown id named in the
header), words and pieces of words of many scripts, pieces cut inside a UTF-8 character, the
same bytes escaped twice (a later token replaces an earlier one in llama.cpp's trie), escapes
with upper-case hex digits (which llama.cpp reads otherwise), extra spellings from
:data:`labkit.conformance.random_gguf.POOL` typed at random, header ids and the add_bos /
add_eos flags (which llama.cpp's RWKV tokenizer ignores). A vocabulary on which llama.cpp
would loop forever (a byte that starts a longer token without being one) is not drawn: labkit
refuses it at load, and ``tests/test_conformance_random_gguf_rwkv.py`` checks that refusal.

The reference (``tools/make_random_gguf_refs.py``, llama-cpp-python 0.3.36) stores the same
answers as for the other families in ``data/gguf/random_llama_cpp_rwkv.json``.

From a shell: ``python -m labkit.conformance.random_gguf --family rwkv --seeds 0:100``.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf_rwkv import draw_file
    >>> drawn = draw_file(3)
    >>> drawn.tokens == draw_file(3).tokens, drawn.tokens[0]
    (True, '<s>')
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.conformance.random_gguf import GluedSpellings, first_spellings, random_flags
from labkit.conformance.random_hf import WORDS, random_texts

FAMILY = "rwkv"
REFERENCE = "gguf/random_llama_cpp_rwkv.json"
SEEDS = range(0, 100)
FLAGS = ("add_bos_token", "add_eos_token")
HEADER_IDS = ("bos", "eos", "eot", "padding")
# GGUF token types for an extra spelling: normal, control, user-defined, unused
TYPES = (1, 3, 3, 4, 4, 5)
SCRIPTS = "abcdefghij ,.'\n\t-éüßñçøΩλжд中文字한국어カナ🙂😀👍" + "\u0301\u200d"


def escaped(data: bytes) -> str:
    """A token as llama.cpp's converter writes it: the body of Python's bytes literal.

    Example:
        >>> escaped(b"a\\n\\xff'")
        "a\\\\n\\\\xff'"
    """
    return repr(data)[2:-1]


@dataclass
class DrawnRwkvGguf(GluedSpellings):
    """One drawn RWKV GGUF: what goes into the file, and how it was drawn."""

    seed: int
    tokens: list[str]
    types: list[int]
    flags: dict[str, bool] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    how: str = ""


def draw_file(seed: int) -> DrawnRwkvGguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> from labkit.conformance.random_gguf_rwkv import draw_file
        >>> len(set(draw_file(5).tokens)) == len(draw_file(5).tokens)
        True
    """
    from labkit.algorithms.rwkv_trie import unescape_rwkv
    from labkit.conformance.random_gguf import POOL

    rng = random.Random(f"gguf-rwkv-{seed}")
    byte_shape = rng.choice(("all", "all", "all", "some"))
    singles = [bytes([b]) for b in range(256) if byte_shape == "all" or rng.random() < 0.8]
    words: list[bytes] = []
    for _ in range(rng.randint(20, 200)):
        source = rng.choice((rng.choice(WORDS), "".join(rng.choice(SCRIPTS) for _ in range(rng.randint(2, 6)))))
        data = source.encode("utf-8")
        start = rng.randrange(len(data))
        words.append(data[start:start + rng.randint(2, 8)] if rng.random() < 0.3 else data)  # cut inside a character
    body = singles + words
    rng.shuffle(body)
    rows = [("<s>", 3)] + [(escaped(data), 1) for data in body]
    how = f"bytes {byte_shape}"
    if rng.random() < 0.3:  # the same bytes escaped another way: the later token wins in llama.cpp's trie
        data = rng.choice(body)
        rows.append(("".join(f"\\x{b:02x}" for b in data), 1))
        how += ", an escape twice"
    if rng.random() < 0.2:  # upper-case hex, which llama.cpp reads as c - '0'
        rows.append((f"\\x{rng.randrange(256):02X}", 1))
        how += ", upper-case hex"
    rows += [(rng.choice(POOL), rng.choice(TYPES)) for _ in range(rng.randint(0, 5))]
    rows += [(f"[PAD{len(rows) + k}]", 5) for k in range(rng.randint(0, 3))]
    if byte_shape == "some":  # the same for every spelling: its first byte must be a token
        present = set(singles)
        rows = [row for row in rows if unescape_rwkv(row[0])[:1] in present]
    tokens, types = (list(column) for column in zip(*first_spellings(rows)))
    flags = random_flags(rng, FLAGS)
    ids = {key: rng.randrange(len(tokens)) for key in HEADER_IDS if rng.random() < 0.25}
    if byte_shape == "some" or rng.random() < 0.2:
        ids["unknown"] = rng.randrange(len(tokens))
    return DrawnRwkvGguf(seed, tokens, types, flags, ids, how)


def write_file(drawn: DrawnRwkvGguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only "rwkv" GGUF (``gguf.GGUFWriter``); its path.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> read_gguf_kv(write_file(draw_file(1), Path(tempfile.mkdtemp())))["tokenizer.ggml.model"]
        'rwkv'
    """
    return write_vocab_gguf(Path(folder) / f"random-rwkv-{drawn.seed}.gguf", "rwkv", drawn.tokens, drawn.types,
                            arch="rwkv6", ids=drawn.ids, flags=drawn.flags)


def texts_for(drawn: DrawnRwkvGguf, count: int = 24) -> list[str]:
    """Random texts with the file's spellings glued in (a third), and texts glued from its own
    tokens' bytes where those are text.

    Example:
        >>> len(texts_for(draw_file(2)))
        24
    """
    from labkit.algorithms.rwkv_trie import unescape_rwkv

    rng = random.Random(f"gguf-rwkv-texts-{drawn.seed}")
    third = count // 3
    out = random_texts(drawn.seed, drawn.spellings, third)
    pieces = []
    for token in drawn.tokens:
        try:
            pieces.append(unescape_rwkv(token).decode("utf-8"))
        except UnicodeDecodeError:
            continue
    for _ in range(count - third):
        units = [rng.choice(pieces) for _ in range(rng.randint(1, 14))]
        if drawn.spellings and rng.random() < 0.4:
            units.insert(rng.randrange(len(units) + 1), rng.choice(drawn.spellings))
        out.append("".join(units))
    return out
