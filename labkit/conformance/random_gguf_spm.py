"""Random SentencePiece-style GGUF files (``tokenizer.ggml.model = "llama"``), compared with llama.cpp.

llama.cpp's "llama" tokenizer reads only the tokens, their scores and types, a few ids and
flags: no merges, no charsmap, no whitespace rules. It puts ``▁`` for every space (and one in
front of the text and after every added token when ``add_space_prefix``), merges the
adjacent pair whose joined spelling is a token of highest score (leftmost on a tie) until none
is left, and spells a character no token covers as its bytes' ``<0xNN>`` tokens (or the
byte itself as a token; with neither it throws, which ends the process).

From a seed this module draws one such file: a base vocabulary with scores
(:func:`labkit.conformance.random_vocab.random_vocabulary`, a Metaspace BPE with scores from
its id order or a Unigram with its own), scores left, tied, zeroed or shuffled, the usual
``<unk>``/``<s>``/``</s>`` in front or not, the 256 byte tokens (all, some, or typed wrongly),
extra spellings from :data:`labkit.conformance.random_gguf.POOL` and retyped base tokens
(control, user-defined, unused, unknown), header ids and the add_bos / add_eos /
add_space_prefix / remove_extra_whitespaces flags present or not. Texts mix
:func:`labkit.conformance.random_hf.random_texts` with words glued from the vocabulary's own
pieces.

The reference (``tools/make_random_gguf_refs.py``, llama-cpp-python 0.3.36) stores
``llama_tokenize`` without and with parse_special, each with add_special off and on, and
``llama_detokenize`` of id lists with unparse_special on and off (remove_special off: what
llama.cpp's own ``common_detokenize`` does), in ``data/gguf/random_llama_cpp_spm.json``.

From a shell: ``python -m labkit.conformance.random_gguf --family spm --seeds 0:120``.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf_spm import draw_file
    >>> drawn = draw_file(3)
    >>> drawn.tokens == draw_file(3).tokens, len(drawn.scores) == len(drawn.tokens)
    (True, True)
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from labkit.conformance.gguf_pretypes import write_vocab_gguf
from labkit.conformance.random_gguf import GluedSpellings, first_spellings, random_flags
from labkit.conformance.random_hf import random_texts

FAMILY = "spm"
REFERENCE = "gguf/random_llama_cpp_spm.json"
SEEDS = range(0, 120)
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))
# GGUF token types for a retyped token: control, user-defined, unused, unknown
RETYPES = (3, 3, 4, 4, 5, 2)
# the flags a file may carry (None: the key is absent, llama.cpp's default holds)
FLAGS = ("add_bos_token", "add_eos_token", "add_space_prefix", "remove_extra_whitespaces")
HEADER_IDS = ("bos", "eos", "unknown", "padding", "eot")


@dataclass
class DrawnSpmGguf(GluedSpellings):
    """One drawn "llama" GGUF: what goes into the file, and how it was drawn."""

    seed: int
    tokens: list[str]
    scores: list[float]
    types: list[int]
    flags: dict[str, bool] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)  # header keys naming a token (bos, eos ...)
    name: str | None = None
    how: str = ""


def base_vocabulary(seed: int, rng: random.Random) -> tuple[list[str], list[float], str]:
    """A base vocabulary with scores, drawn by hand (a trained Unigram's scores vary from run to
    run, and the file's sha256 is checked against the one llama.cpp read): a Metaspace BPE
    (scores from id order) or a Unigram; the llama and PLaMo-2 families both draw it.

    Example:
        >>> tokens, scores, how = base_vocabulary(1, random.Random(1))
        >>> len(tokens) == len(scores), how.split(",")[0] in ("meta", "unigram")
        (True, True)
    """
    from labkit.conformance.random_vocab import hand_bpe, hand_unigram, random_alphabet

    kind = rng.choice(("meta", "meta", "unigram"))
    alphabet = random_alphabet(random.Random(f"gguf-spm-alphabet-{seed}"))
    model = json.loads(hand_unigram(rng, alphabet) if kind == "unigram" else hand_bpe("meta", rng, alphabet))["model"]
    if kind == "unigram":
        tokens = [piece for piece, _ in model["vocab"]]
        scores = [float(score) for _, score in model["vocab"]]
    else:
        tokens = sorted(model["vocab"], key=model["vocab"].get)
        scores = [-float(i) for i in range(len(tokens))]
    shape = rng.choice(("as drawn", "as drawn", "tied", "zero", "shuffled", "reversed"))
    if shape == "tied":
        scores = [float(round(s / 7)) for s in scores]  # many pieces share a score: leftmost wins
    elif shape == "zero":
        scores = [0.0] * len(scores)
    elif shape == "shuffled":
        rng.shuffle(scores)
    elif shape == "reversed":
        scores = [-s for s in scores]
    return tokens, scores, f"{kind}, scores {shape}"


def draw_file(seed: int) -> DrawnSpmGguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> from labkit.conformance.random_gguf_spm import draw_file
        >>> len(set(draw_file(5).tokens)) == len(draw_file(5).tokens)
        True
    """
    from labkit.conformance.random_gguf import POOL

    rng = random.Random(f"gguf-spm-{seed}")
    tokens, scores, how = base_vocabulary(seed, rng)
    types = [1] * len(tokens)
    for _ in range(rng.choice((0, 0, 1, 2, 3))):  # a converter's mistakes on ordinary pieces
        types[rng.randrange(len(tokens))] = rng.choice(RETYPES)
    head: list[tuple[str, float, int]] = []
    if rng.random() < 0.7:
        head += [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    byte_shape = rng.choice(("all", "all", "all", "none", "some", "typed normal"))
    if byte_shape != "none":
        chosen = BYTE_TOKENS if byte_shape != "some" else [b for b in BYTE_TOKENS if rng.random() < 0.7]
        head += [(b, 0.0, 1 if byte_shape == "typed normal" else 6) for b in chosen]
    extra = [(rng.choice(POOL), rng.uniform(-20, 5), rng.choice((1, *RETYPES))) for _ in range(rng.randint(0, 6))]
    rows = first_spellings([*head, *zip(tokens, scores, types), *extra])
    tokens, scores, types = (list(column) for column in zip(*rows))
    seen = set(tokens)
    flags = random_flags(rng, FLAGS)
    ids = {key: rng.randrange(len(tokens)) for key in HEADER_IDS if rng.random() < 0.2}
    name = rng.choice((None,) * 7 + ("Phi-3 mini",))
    if name and rng.random() < 0.5:  # else llama.cpp's load fails (Phi-3's rules need these four)
        for spelling in ("</s>", "<unk>", "<s>", "<|endoftext|>"):
            if spelling not in seen:
                seen.add(spelling)
                tokens.append(spelling)
                scores.append(0.0)
                types.append(3)
    return DrawnSpmGguf(seed, tokens, scores, types, flags, ids, name, f"{how}, bytes {byte_shape}")


def write_file(drawn: DrawnSpmGguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only "llama" GGUF (``gguf.GGUFWriter``); its path.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> path = write_file(draw_file(1), Path(tempfile.mkdtemp()))
        >>> read_gguf_kv(path)["tokenizer.ggml.model"]
        'llama'
    """
    return write_vocab_gguf(Path(folder) / f"random-spm-{drawn.seed}.gguf", "llama", drawn.tokens, drawn.types,
                            name=drawn.name, scores=drawn.scores, ids=drawn.ids, flags=drawn.flags)


def texts_for(drawn: DrawnSpmGguf, count: int = 20) -> list[str]:
    """Random texts with the file's spellings glued in (half), and words glued from its own
    pieces with ``▁`` read as a space (half), so that most characters have a token.

    Example:
        >>> len(texts_for(draw_file(2)))
        20
    """
    rng = random.Random(f"gguf-spm-texts-{drawn.seed}")
    half = count // 2
    out = random_texts(drawn.seed, drawn.spellings, half)
    pieces = [t for t, kind in zip(drawn.tokens, drawn.types) if kind == 1 and not t.startswith("<0x")]
    for _ in range(count - half):
        units = [rng.choice(pieces).replace("\u2581", " ") for _ in range(rng.randint(1, 12))]
        if drawn.spellings and rng.random() < 0.5:
            units.insert(rng.randrange(len(units) + 1), rng.choice(drawn.spellings))
        if rng.random() < 0.3:
            units.insert(rng.randrange(len(units) + 1), rng.choice((" ", "  ", "\n", "\t", " \u2581")))
        out.append("".join(units))
    return out
