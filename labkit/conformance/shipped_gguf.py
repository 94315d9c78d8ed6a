"""The four bundled GGUF files against llama.cpp on random input, with every engine that serves them.

The 46 ``.inp/.out`` vectors of each bundled GGUF are fixed texts; this module draws more: 300
random texts over mixed scripts, combining marks, spaces of every kind and the file's special
spellings glued to neighbours (:func:`labkit.conformance.random_hf.random_texts`), long words of
99 to 300 characters, 500 random id lists (200 of them from the first 259 ids, where the
byte and special tokens are) and the ids of five texts with spaced punctuation. ``tools/make_random_gguf_refs.py`` asks llama.cpp (llama-cpp-python
0.3.36) for ``llama_tokenize`` with parse_special off and on, each with add_special off and on,
and ``llama_detokenize`` with and without the special tokens; the answers are stored in
``data/gguf/shipped_llama_cpp.json``.

Two differences are labkit's documented choices, and :func:`first_difference` checks that a
difference is exactly one of them:

* **NFC before a Qwen2-like split** (qwen2): the model's own ``tokenizer.json`` normalises to
  NFC, llama.cpp does not, so ids may differ on a text that NFC changes, and only there.
* **No ``clean_spaces`` pass on byte-level decoding** (gpt2): ``llama_detokenize`` drops the
  space before ``?!.,`` and in contractions for gpt-2-style names; labkit joins the pieces, as
  llama.cpp's server ``/detokenize`` does (``decode(encode(text)) == text``), so a decode may
  differ where that pass changes it, and only there.

From a shell: ``python -m labkit.conformance.shipped_gguf`` (or ``--write FOLDER`` to write the
cases for the tool).

Example (the cases are drawn from fixed seeds):
    >>> from labkit.conformance.shipped_gguf import case_of
    >>> case = case_of("gpt2")
    >>> len(case["texts"]), len(case["id_lists"]), case == case_of("gpt2")
    (307, 505, True)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import unicodedata
from pathlib import Path

from labkit.algorithms.llama_wpm import clean_spaces
from labkit.conformance.random_gguf import describe_difference, differences, engine_answers, file_digest
from labkit.conformance.random_hf import random_texts
from labkit.paths import bundled_path, data_path

NAMES = ("gpt2", "llama-spm", "qwen2", "bert-bge")
REFERENCE = "gguf/shipped_llama_cpp.json"
ENGINES = ("labkit", "hf", "tiktoken", "sentencepiece")
NFC_NAMES = ("qwen2",)  # split after NFC, as the model's tokenizer.json does (llama.cpp does not)
UNCLEANED_NAMES = ("gpt2",)  # llama_detokenize's clean_spaces is on for these; labkit joins the pieces
# texts whose ids clean_spaces would rewrite when decoded (a space before ?!., and in contractions)
SPACED_PUNCTUATION = ("Hello , world .", "it ' s here", "I 'm sure , aren 't you ?", "don 't ! no 've", "a . b ' c")


def case_of(name: str) -> dict:
    """The texts and id lists llama.cpp is asked about for one bundled GGUF."""
    import labkit

    tok = labkit.load(name, engine="labkit")
    specials = [a.content for a in tok.vocab.added_tokens][:40]
    texts = [text for seed in range(15) for text in random_texts(1000 + seed, specials, 20)]
    texts += ["a" * n for n in (99, 100, 101, 150, 300)] + ["x" + "é" * 120, "hello " + "z" * 200]
    rng = random.Random(f"shipped-{name}")
    size = tok.vocab_size
    id_lists = [[rng.randrange(size) for _ in range(rng.randrange(1, 9))] for _ in range(300)]
    id_lists += [[rng.randrange(0, 259) for _ in range(rng.randrange(1, 6))] for _ in range(200)]
    id_lists += [tok.encode(text).ids for text in SPACED_PUNCTUATION]
    path = bundled_path(name)
    return {"name": name, "seed": NAMES.index(name), "family": "shipped", "path": str(path),
            "sha256": file_digest(path), "texts": texts, "id_lists": id_lists,
            "inputs_sha256": hashlib.sha256(json.dumps([texts, id_lists]).encode()).hexdigest()}


def load_reference(path: Path | None = None) -> dict[str, dict]:
    """llama.cpp's stored answers, by bundled name."""
    stored = json.loads(Path(path or data_path(REFERENCE)).read_text(encoding="utf-8"))
    return {NAMES[entry["seed"]]: entry for entry in stored["seeds"]}


def _documented(name: str, what: str, where, got: str, want: str) -> bool:
    """Whether one difference is exactly a documented choice (see the module docstring)."""
    if what == "ids":
        return name in NFC_NAMES and unicodedata.normalize("NFC", where) != where
    if name in UNCLEANED_NAMES and not got.startswith("sha256:"):
        return clean_spaces(got.encode("utf-8", "surrogatepass")).decode("utf-8", "replace") == want
    return False


def first_difference(name: str, got: dict, want: dict, case: dict) -> str | None:
    """The first answer that differs from llama.cpp's and is not a documented choice; None if none."""
    return next((describe_difference(*found) for found in differences(got, want, case)
                 if not _documented(name, *found[1:])), None)


def documented_differences(name: str, got: dict, want: dict, case: dict) -> dict[str, int]:
    """How many answers differ from llama.cpp's by a documented choice, per kind ("ids", "decode")."""
    counts = {"ids": 0, "decode": 0}
    for _, what, where, a, b in differences(got, want, case):
        counts[what] += _documented(name, what, where, a, b)
    return counts


def check(name: str, engine: str, reference: dict, case: dict | None = None, vocab=None) -> str:
    """"exact", "refused: why" or "differs: where" for one bundled name and engine.

    With ``vocab`` (the file read once by the caller, for every engine) the engine is built from
    it: the same decision as ``labkit.load``, whose refusal also builds every other engine to name
    those that can serve the file (seconds on qwen2), while this one gives the engine's own reason.
    """
    import labkit
    from labkit.factory import build_engine

    case = case or case_of(name)
    if (case["sha256"], case["inputs_sha256"]) != (reference["sha256"], reference["inputs_sha256"]):
        raise RuntimeError(f"{name}: the file or the drawn inputs are not what llama.cpp answered; "
                           f"remake {REFERENCE} (see tools/make_random_gguf_refs.py)")
    try:
        tok = labkit.load(name, engine=engine) if vocab is None else build_engine(vocab, engine)
    except labkit.LabkitError as exc:
        return f"refused: {exc}"
    got = engine_answers(tok, case)
    where = first_difference(name, got, reference, case)
    if where is not None:
        return f"differs: {where}"
    choices = documented_differences(name, got, reference, case)
    return "exact" + "".join(f", {n} {what} as documented" for what, n in choices.items() if n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.shipped_gguf", description=__doc__.split("\n")[0])
    parser.add_argument("--write", default=None, metavar="FOLDER",
                        help="instead: write cases.json there, for tools/make_random_gguf_refs.py")
    args = parser.parse_args(argv)
    if args.write:
        folder = Path(args.write)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cases.json").write_text(json.dumps([case_of(n) for n in NAMES], ensure_ascii=False), encoding="utf-8")
        print(f"wrote the cases of {', '.join(NAMES)} to {folder / 'cases.json'}")
        return 0
    reference = load_reference()
    differs = False
    for name in NAMES:
        case = case_of(name)
        for engine in ENGINES:
            result = check(name, engine, reference[name], case)
            differs |= result.startswith("differs")
            print(f"{name:10} {engine:14} {result[:160]}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
