"""Random byte-level GGUF files: a user's own GGUF, compared with what llama.cpp makes of it.

A GGUF holds a vocabulary, merges, one type per token and a split name
(``tokenizer.ggml.pre``); llama.cpp then changes some tokens by their spelling when it loads
them (:mod:`labkit.formats.gguf_attributes`) and finds added tokens its own way (longest
spelling first). From a seed this module draws one file: a random byte-level vocabulary
(:mod:`labkit.conformance.random_vocab`, trained or drawn by hand), extra tokens from a pool
of real models' spellings (``<|im_end|>``, ``</s>``, ``<|fim_prefix|>``, ``<|channel|>``,
``<mask>`` ...) typed normal, control, user-defined or unused at random (a converter's
mistakes included), a split from every name labkit lists, sometimes a model name with rules
of its own (Phi-3, ModernBERT) or ids named in the header. Then texts over the file's
alphabet with the spellings glued in, and id lists (random ones and every id once).

The reference is llama.cpp itself (llama-cpp-python 0.3.36, which vendors llama.cpp commit
0c1e5709): ``llama_tokenize`` with and without parse_special, and ``llama_token_to_piece``
per id with and without special. It cannot be installed beside labkit's own pins, so
``tools/make_random_gguf_refs.py`` runs it once in a venv of its own and stores its answers
in ``data/gguf/random_llama_cpp.json``; :func:`check_seed` compares labkit's engines with
them. Left out of the texts: what labkit documents as following the model's own tokenizer
rather than llama.cpp (NFC before the split of Qwen2-like models, ``'ſ`` under ``(?i:'s)``;
see :mod:`labkit.algorithms.pretokenize`).

From a shell: ``python -m labkit.conformance.random_gguf --seeds 0:150`` (against the stored
answers; exit status 1 when an engine differs). ``--family spm`` runs the SentencePiece-style
("llama") files of :mod:`labkit.conformance.random_gguf_spm` instead, ``--family wpm`` the
WordPiece ("bert") files of :mod:`labkit.conformance.random_gguf_wpm`, ``--family ugm`` the
Unigram ("t5") files of :mod:`labkit.conformance.random_gguf_ugm`, ``--family utf8`` the files of
BPE over raw UTF-8 (Gemma 4's kind) of :mod:`labkit.conformance.random_gguf_utf8`, ``--family rwkv``
the RWKV files of :mod:`labkit.conformance.random_gguf_rwkv`, ``--family plamo2`` the PLaMo-2 files of
:mod:`labkit.conformance.random_gguf_plamo2`, ``--family dna`` the hybriddna files (byte-level BPE and
DNA k-mers) of :mod:`labkit.conformance.random_gguf_dna`.

Example (a seed is one file):
    >>> from labkit.conformance.random_gguf import draw_file
    >>> drawn = draw_file(4)
    >>> drawn.pre in PRE_NAMES, draw_file(4).tokens == drawn.tokens
    (True, True)
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import random
import sys
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from labkit.conformance.gguf_pretypes import LLAMA_CPP_PRE_NAMES, NEWER_PRE_NAMES, NFC_PRE_TYPES, write_byte_level_gguf
from labkit.conformance.random_hf import SPELLINGS, random_texts
from labkit.conformance.random_vocab import random_vocabulary
from labkit.formats.gguf_attributes import EOG_SPELLINGS, FIM_SPELLINGS, HARMONY_USER_DEFINED
from labkit.paths import data_path

# the names the stored answers were drawn from (later ones are checked in tests/test_pre_types_llama_cpp.py)
PRE_NAMES = tuple(sorted(set(LLAMA_CPP_PRE_NAMES) - set(NEWER_PRE_NAMES)))
ENGINES = ("labkit", "hf", "sentencepiece", "tiktoken")  # every engine that may serve a GGUF
REFERENCE = "gguf/random_llama_cpp.json"
SEEDS = range(0, 150)  # the seeds the stored answers cover
# spellings real GGUFs hold, which llama.cpp's load-time rules look at
POOL = tuple(dict.fromkeys([*SPELLINGS, *sorted(EOG_SPELLINGS), *(s for v in FIM_SPELLINGS.values() for s in v[:2]),
                            *sorted(HARMONY_USER_DEFINED), "<|plamo:eos|>", "<unused3>", "<mask>", "[MASK]", "<s>",
                            "<unk>", "</s>"]))
# GGUF token types drawn for an extra token: normal, control, user-defined, unused
TYPES = (1, 3, 3, 4, 4, 5)
# a name llama.cpp gives rules of its own (Phi-3: specials swallow the spaces after them)
NAMES = (None, None, None, None, "Phi-3 mini", "ModernBERT base", "a model")
PHI3_NEEDS = ("</s>", "<unk>", "<s>", "<|endoftext|>")


@dataclass
class DrawnGguf:
    """One drawn file: what goes into the GGUF, and how it was drawn."""

    seed: int
    pre: str
    tokens: list[str]
    types: list[int]
    merges: list[str]
    name: str | None = None
    ids: dict[str, int] = field(default_factory=dict)  # header keys naming a token (eos, eot, fim ...)

    @property
    def spellings(self) -> list[str]:
        """The extra tokens' spellings (what the texts glue in)."""
        return [t for t, kind in zip(self.tokens, self.types) if kind != 1 or t in POOL]


def draw_file(seed: int) -> DrawnGguf:
    """The file of ``seed`` (see the module docstring); the same seed draws the same file.

    Example:
        >>> from labkit.conformance.random_gguf import draw_file
        >>> sorted(set(draw_file(2).types) - {1}) <= [3, 4, 5]
        True
    """
    rng = random.Random(f"gguf-{seed}")
    doc = json.loads(random_vocabulary("byte", seed)[0])
    vocab = doc["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.get)
    types = [1] * len(tokens)
    merges = [m if isinstance(m, str) else " ".join(m) for m in doc["model"]["merges"]]
    name = rng.choice(NAMES)
    extra = [rng.choice(POOL) for _ in range(rng.randint(0, 7))]
    if name == "Phi-3 mini" and rng.random() < 0.5:
        extra += PHI3_NEEDS  # else llama.cpp's load fails, and so must labkit's
    for spelling in extra:
        kind = rng.choice(TYPES)
        if spelling in tokens:
            types[tokens.index(spelling)] = kind  # a converter that typed an existing token
        else:
            tokens.append(spelling)
            types.append(kind)
    ids = {}
    for key in ("eos", "eot", "fim_pre", "fim_pad"):
        if rng.random() < 0.15:
            ids[key] = rng.randrange(len(tokens))
    return DrawnGguf(seed, rng.choice(PRE_NAMES), tokens, types, merges, name, ids)


def write_file(drawn: DrawnGguf, folder: Path) -> Path:
    """Write the drawn vocabulary as a vocab-only GGUF (``gguf.GGUFWriter``); its path."""
    return write_byte_level_gguf(Path(folder) / f"random-{drawn.seed}.gguf", drawn.tokens, drawn.types, drawn.merges,
                                 drawn.pre, name=drawn.name, ids=drawn.ids)


class GluedSpellings:
    """For a family's drawn file (a dataclass with ``tokens`` and ``types``): the spellings its
    texts glue in, :func:`glued_spellings` of its tokens.

    Example:
        >>> from dataclasses import dataclass
        >>> from labkit.conformance.random_gguf import GluedSpellings
        >>> @dataclass
        ... class Drawn(GluedSpellings):
        ...     tokens: list
        ...     types: list
        >>> Drawn(["a", "<s>"], [1, 3]).spellings
        ['<s>']
    """

    @property
    def spellings(self) -> list[str]:
        return glued_spellings(self.tokens, self.types)


def glued_spellings(tokens, types) -> list[str]:
    """The tokens a family's texts glue in: every one not typed normal or byte, and the pool's.

    Example:
        >>> from labkit.conformance.random_gguf import glued_spellings
        >>> glued_spellings(["a", "<s>", "<0x42>", "<mask>"], [1, 3, 6, 1])
        ['<s>', '<mask>']
    """
    return [t for t, kind in zip(tokens, types) if kind not in (1, 6) or t in POOL]


def first_spellings(rows) -> list:
    """The rows whose spelling (first field) comes first: llama.cpp aborts on a repeated
    spelling, so a drawn file keeps the first one drawn.

    Example:
        >>> from labkit.conformance.random_gguf import first_spellings
        >>> first_spellings([("a", 1), ("b", 2), ("a", 3)])
        [('a', 1), ('b', 2)]
    """
    kept, seen = [], set()
    for row in rows:
        if row[0] not in seen:
            seen.add(row[0])
            kept.append(row)
    return kept


def random_flags(rng: random.Random, names) -> dict[str, bool]:
    """Each flag left out of the header (half the time), or written True or False.

    Example:
        >>> import random
        >>> from labkit.conformance.random_gguf import random_flags
        >>> set(random_flags(random.Random(0), ("a", "b", "c"))) <= {"a", "b", "c"}
        True
    """
    flags = {}
    for flag in names:
        value = rng.choice((None, None, True, False))
        if value is not None:
            flags[flag] = value
    return flags


def texts_for(drawn: DrawnGguf, count: int = 20) -> list[str]:
    """Random texts with the file's spellings glued in, less what labkit documents as following
    the model's own tokenizer instead of llama.cpp (NFC for Qwen2-like splits, ``ſ``)."""
    nfc = drawn.pre in NFC_PRE_TYPES
    return [t for t in random_texts(drawn.seed, drawn.spellings, count)
            if "\u017f" not in t and not (nfc and unicodedata.normalize("NFC", t) != t)]


def id_lists(drawn, count: int = 20, salt: str = "") -> list[list[int]]:
    """Random id lists, then every id once in order (one list)."""
    rng = random.Random(f"gguf-{salt}ids-{drawn.seed}")
    n = len(drawn.tokens)
    return [[rng.randrange(n) for _ in range(rng.randint(1, 8))] for _ in range(count)] + [list(range(n))]


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# the byte-level files are this module's; the others' draws live in a module each
FAMILIES = {"byte": __name__, "spm": "labkit.conformance.random_gguf_spm", "wpm": "labkit.conformance.random_gguf_wpm",
            "ugm": "labkit.conformance.random_gguf_ugm", "utf8": "labkit.conformance.random_gguf_utf8",
            "rwkv": "labkit.conformance.random_gguf_rwkv", "plamo2": "labkit.conformance.random_gguf_plamo2",
            "dna": "labkit.conformance.random_gguf_dna"}
ABORT = "abort"  # what the answers file holds where llama.cpp ended its process


def family_module(family: str):
    """The module that draws, writes and texts the files of ``family`` (``"byte"``, ``"spm"``).

    Example:
        >>> from labkit.conformance.random_gguf import family_module
        >>> family_module("spm").REFERENCE
        'gguf/random_llama_cpp_spm.json'
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown GGUF family {family!r}; known: {', '.join(FAMILIES)}")
    return importlib.import_module(FAMILIES[family])


def case_of(seed: int, folder: Path, family: str = "byte") -> dict:
    """What the reference needs for one seed: the GGUF's path and digest, the texts, the id lists."""
    module = family_module(family)
    drawn = module.draw_file(seed)
    path = module.write_file(drawn, folder)
    texts = module.texts_for(drawn)
    lists = id_lists(drawn, salt="" if family == "byte" else f"{family}-")
    case = {"seed": seed, "path": str(path), "sha256": file_digest(path), "texts": texts, "id_lists": lists,
            "inputs_sha256": hashlib.sha256(json.dumps([texts, lists]).encode()).hexdigest()}
    if family != "byte":
        case["family"] = family
    return case


# ----------------------------------------------------------------------------- comparing


def _joined(ids: list[int]) -> str:
    return " ".join(map(str, ids))


def compact(text: str) -> str:
    """A decoded text as the answers file stores it: itself, or past 200 characters its sha256.

    Example:
        >>> from labkit.conformance.random_gguf import compact
        >>> compact("hi"), compact("x" * 201)[:7]
        ('hi', 'sha256:')
    """
    return text if len(text) <= 200 else "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _encoded(tok, text: str, add: bool, parse: bool) -> str:
    """The ids as the answers file joins them; ABORT where labkit refuses the text as llama.cpp
    ends its process on it (a family case only)."""
    import labkit

    try:
        return _joined(tok.encode(text, add_special_tokens=add, parse_special=parse).ids)
    except labkit.LabkitError as exc:
        # labkit refuses a text llama.cpp cannot tokenize (it ends its process); any other refusal differs
        return ABORT if "llama.cpp" in str(exc) else f"error: {exc}"


def engine_answers(tok, case: dict) -> dict:
    """What one labkit engine answers for a case, in the answers file's layout (None: the
    same as the entry before it, with parse_special / with specials shown / without add_special)."""
    texts = case["texts"]
    plain = [_encoded(tok, t, False, False) for t in texts]
    special = [_encoded(tok, t, False, True) for t in texts]
    keep = [compact(tok.decode(ids, skip_special_tokens=False)) for ids in case["id_lists"]]
    skip = [compact(tok.decode(ids, skip_special_tokens=True)) for ids in case["id_lists"]]
    out = {"plain": plain, "special": [s if s != p else None for s, p in zip(special, plain)],
           "keep": keep, "skip": [s if s != k else None for s, k in zip(skip, keep)]}
    if case.get("family"):
        bos_plain = [_encoded(tok, t, True, False) for t in texts]
        bos_special = [_encoded(tok, t, True, True) for t in texts]
        out["bos_plain"] = [b if b != p else None for b, p in zip(bos_plain, plain)]
        out["bos_special"] = [b if b != s else None for b, s in zip(bos_special, special)]
    return out


# mode -> (the mode a None in it stands for, what it holds); bos_* only in a family's answers
MODES = {"plain": (None, "ids"), "special": ("plain", "ids"), "bos_plain": ("plain", "ids"),
         "bos_special": ("special", "ids"), "keep": (None, "decode"), "skip": ("keep", "decode")}


def _resolved(answers: dict, mode: str, index: int) -> str:
    """One answer with its None ("as the mode it stands for") followed to the value."""
    value = answers[mode][index]
    return value if value is not None else _resolved(answers, MODES[mode][0], index)


def differences(got: dict, want: dict, case: dict):
    """Each answer of an engine that differs from llama.cpp's: (mode, "ids" or "decode", the
    text or id list asked, the engine's answer, llama.cpp's), in MODES order."""
    for mode, (_, what) in MODES.items():
        if mode not in want:
            continue
        for index in range(len(want[mode])):
            a, b = _resolved(got, mode, index), _resolved(want, mode, index)
            if a != b:
                yield mode, what, case["texts"][index] if what == "ids" else case["id_lists"][index], a, b


def describe_difference(mode: str, what: str, where, got: str, want: str) -> str:
    """One difference from :func:`differences` as a line (an id list shown by its first 8 ids)."""
    shown = where if what == "ids" else where[:8]
    return f"{mode} {what} of {shown!r}: {got[:80]!r} where llama.cpp gives {want[:80]!r}"


def first_difference(got: dict, want: dict, case: dict) -> str | None:
    """The first place an engine's answers differ from llama.cpp's, described; None if none."""
    return next((describe_difference(*found) for found in differences(got, want, case)), None)


def load_reference(path: Path | None = None, family: str = "byte") -> dict[int, dict]:
    """The stored llama.cpp answers, by seed."""
    stored = json.loads(Path(path or data_path(family_module(family).REFERENCE)).read_text(encoding="utf-8"))
    return {entry["seed"]: entry for entry in stored["seeds"]}


def check_seed(seed: int, reference: dict, folder: Path, engines=ENGINES, family: str = "byte") -> dict[str, str]:
    """Per engine: "exact", "refused: why" or "differs: where" against llama.cpp's answers."""
    import labkit

    case = case_of(seed, folder, family)
    if (case["sha256"], case["inputs_sha256"]) != (reference["sha256"], reference["inputs_sha256"]):
        raise RuntimeError(f"seed {seed}: the drawn GGUF or its texts are not what llama.cpp read (the draw "
                           f"changed); remake {family_module(family).REFERENCE} with tools/make_random_gguf_refs.py")
    out = {}
    for engine in engines:
        try:
            tok = labkit.load(case["path"], engine=engine)
        except labkit.LabkitError as exc:
            out[engine] = f"refused: {exc}"
            continue
        if reference.get("refused"):
            out[engine] = f"differs: llama.cpp refuses the file ({reference['refused']}) and {engine} serves it"
            continue
        where = first_difference(engine_answers(tok, case), reference, case)
        out[engine] = "exact" if where is None else f"differs: {where}"
    return out


def run_seeds(seeds, reference: dict[int, dict], engines=ENGINES, out=None, family: str = "byte") -> Counter:
    """Check each seed against the stored answers, one line per seed; the totals."""
    totals: Counter = Counter()
    with tempfile.TemporaryDirectory() as folder:
        for seed in seeds:
            if seed not in reference:
                continue
            results = check_seed(seed, reference[seed], Path(folder), engines, family)
            for engine, result in results.items():
                totals[engine, result.split(":", 1)[0]] += 1
            if out is not None:
                drawn = family_module(family).draw_file(seed)
                print(seed, getattr(drawn, "pre", None) or getattr(drawn, "how", ""), results, file=out)
    return totals


def main(argv: list[str] | None = None) -> int:
    from labkit.conformance.runner import parse_seeds

    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.random_gguf", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default=None, help="range start:stop (default: the seeds the stored answers cover, "
                        "0:150 for byte, 0:120 for spm, 0:100 for wpm, 0:80 and 16 more for ugm)")
    parser.add_argument("--family", default="byte", choices=sorted(FAMILIES),
                        help="byte: byte-level BPE (tokenizer.ggml.model gpt2); spm: SentencePiece-style (llama); "
                        "wpm: WordPiece (bert); ugm: Unigram (t5)")
    parser.add_argument("--reference", default=None, help=f"answers file (default data/{REFERENCE} for byte)")
    parser.add_argument("--write", default=None, metavar="FOLDER",
                        help="instead: write the seeds' GGUFs and cases.json there, for tools/make_random_gguf_refs.py")
    args = parser.parse_args(argv)
    module = family_module(args.family)
    seeds = parse_seeds(args.seeds) if args.seeds else module.SEEDS
    if args.write:
        folder = Path(args.write)
        folder.mkdir(parents=True, exist_ok=True)
        cases = [case_of(seed, folder, args.family) for seed in seeds]
        (folder / "cases.json").write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {len(cases)} GGUFs and cases.json to {folder}")
        return 0
    totals = run_seeds(seeds, load_reference(args.reference, args.family), out=sys.stdout, family=args.family)
    print(dict(sorted(totals.items())))
    return 1 if any(kind == "differs" for _, kind in totals) else 0


if __name__ == "__main__":
    sys.exit(main())
