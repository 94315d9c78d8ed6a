"""Every split name llama.cpp knows, measured against llama.cpp itself on a vocabulary that shows the split.

A vocabulary trained with a split hides most of another split's cuts: where no merge crosses
a cut, cutting there or not gives the same ids. This module trains a byte-level BPE on its
probe texts with no split at all (:func:`probe_vocabulary`), so merges cross every place a
pre-tokenizer might cut, writes it as a GGUF under each ``tokenizer.ggml.pre`` name llama.cpp
0c1e5709 knows (:func:`write_probe_gguf`), and compares labkit's ids with llama.cpp's
``llama_tokenize`` (parse_special off), stored by ``tools/make_pre_type_refs.py`` in
``data/gguf/pre_types_llama_cpp.json`` as a short digest per text.

What labkit documents as following the model's own tokenizer rather than llama.cpp shows up
here and is checked to be only that (``tests/test_pre_types_llama_cpp.py``): NFC before the
split of Qwen2-like models, and GPT-4o's and Tekken's case classes, which llama.cpp's regex
engine cannot read (it rewrites them as "a letter that is not a-z", so ``é`` counts as upper
case there). Names whose split labkit does not reproduce are refused at load
(:data:`labkit.algorithms.pretokenize.LLAMA_CPP_UNSERVED`).

From a shell: ``python -m labkit.conformance.pre_probe`` (per name: texts equal to llama.cpp's
answers; exit status 1 when a name differs beyond what is documented).

Example:
    >>> from labkit.conformance.pre_probe import ids_digest
    >>> ids_digest([1, 2, 3])
    '7c8f50592903'
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import unicodedata
from functools import lru_cache
from pathlib import Path

from labkit.conformance.gguf_pretypes import LLAMA_CPP_PRE_NAMES, NFC_PRE_TYPES, write_byte_level_gguf
from labkit.paths import data_path

REFERENCE = "gguf/pre_types_llama_cpp.json"
# the names llama.cpp splits with code of its own (a hand-written scanner, a digit grouping
# function), measured again on random texts in CUSTOM_REFERENCE
CUSTOM_SPLIT_NAMES = ("afmoe", "cohere2moe", "kimi-k2", "tiny_aya")
CUSTOM_REFERENCE = "gguf/custom_splits_llama_cpp.json"
# what those texts are made of: the cases that code tells apart
CUSTOM_ALPHABET = (*"abcXYZ'sStTmdrevlL ", "  ", "\n", "\r\n", "\t", "1", "23", "4567", "٣", "½", "²", "中",
                   "文字", "日本", "か", "カ", "한", "é", "\u0301", "!", "?", ".", "'", "'s", "'re", "'LL", "ſ",
                   "\u3000", "\xa0", "𠀀", "\uf900", "👍", "ß", "İ")


def custom_split_texts(count: int = 1500, seed: int = 11) -> list[str]:
    """Random texts of 1-14 draws from CUSTOM_ALPHABET (Han, kana, Hangul, digits of several
    scripts, contractions, spaces).

    Example:
        >>> from labkit.conformance.pre_probe import custom_split_texts
        >>> len(custom_split_texts(5)), custom_split_texts(5) == custom_split_texts(5)
        (5, True)
    """
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(CUSTOM_ALPHABET) for _ in range(rng.randint(1, 14))) for _ in range(count)]


# pre types whose case classes llama.cpp rewrites: GPT-4o's and Tekken's splits, under every name
CASE_CLASS_PRE_TYPES = frozenset(name for name, family in LLAMA_CPP_PRE_NAMES.items() if family[0] in ("GPT4O", "TEKKEN"))
# handwritten probes: digit runs, case, contractions, punctuation before letters, scripts, spaces
HANDWRITTEN = (
    "1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890",
    "a1b22c333d4444 e55555 x1,234,567.89 and 3.14159",
    "Hello World HELLO world hELLO CamelCaseWord iPhone XMLHttpRequest",
    "don't I'M you'LL we'Ve she'd it'S 'ſ 'S 'll",
    "$abc -x .yz #tag @user (paren) [br] {cu} a+b=c ~tilde `tick`",
    "école ÉCOLE Éc naïve résumé Straße ΑΒΓ αβγ Привет мир",
    "e\u0301 a\u0308b n\u0303o \u0915\u093f \u0627\u064e",
    "我爱自然语言處理 東京は日本の首都です カタカナ ｶﾀｶﾅ 한국어 ㄱㄴㄷ ㄅㄆ",
    "ไทย ລາວ ខ្មែរ မြန်မာ ꩠ",
    "line1\nline2\r\nline3\n\n\nend   spaced\t\ttab  \n  x",
    "    four spaces\n        eight\n" + " " * 40 + "forty",
    "emoji 🙂👍🏽 😀 🏳\ufe0f\u200d🌈 done",
    "<sentinel:12> IMGIMGABCZ x",
    "！？。、・「」『』…—“”‘’：；，",
    "x" * 50 + "1" * 20 + " end",
    "", " ", "\n", "a", "  a  ", "a\n",
)


def probe_texts() -> list[str]:
    """The handwritten probes and 240 random strings over labkit's test alphabets.

    Example:
        >>> from labkit.conformance.pre_probe import probe_texts
        >>> len(probe_texts())
        261
    """
    from labkit.conformance.random_hf import random_texts

    return list(HANDWRITTEN) + [t for seed in range(30) for t in random_texts(1000 + seed, (), 8)]


@lru_cache(maxsize=2)
def probe_vocabulary(texts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tokens by id, merges) of a byte-level BPE trained by ``tokenizers`` on ``texts`` without
    any split, so that its merges cross every place a split might cut."""
    import tokenizers
    from tokenizers import models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=6000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator([t for t in texts if t] * 3, trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = model["vocab"]
    tokens = tuple(sorted(vocab, key=vocab.get))
    return tokens, tuple(m if isinstance(m, str) else " ".join(m) for m in model["merges"])


def write_probe_gguf(pre: str, folder: Path, texts: list[str]) -> Path:
    """The probe vocabulary as a vocab-only GGUF named ``pre``; its path."""
    tokens, merges = probe_vocabulary(tuple(texts))
    return write_byte_level_gguf(Path(folder) / f"probe-{pre}.gguf", list(tokens), [1] * len(tokens), list(merges), pre)


def ids_digest(ids) -> str:
    """12 hex digits of the sha256 of the ids joined by spaces (what the answers file keeps)."""
    return hashlib.sha256(" ".join(map(str, ids)).encode()).hexdigest()[:12]


def load_reference(path: Path | None = None) -> dict:
    """The stored llama.cpp answers: texts, and per name its file's sha256 and digests (or why
    llama.cpp did not serve it)."""
    return json.loads(Path(path or data_path(REFERENCE)).read_text(encoding="utf-8"))


def documented(pre: str, text: str) -> bool:
    """Whether labkit documents following the model's tokenizer rather than llama.cpp on this
    text: NFC changes it under a Qwen2-like name, or it holds a non-ASCII letter or a mark
    under a name whose case classes llama.cpp rewrites.

    Example:
        >>> from labkit.conformance.pre_probe import documented
        >>> documented("gpt-4o", "École"), documented("gpt-4o", "School"), documented("qwen2", "e\\u0301")
        (True, False, True)
    """
    if pre in NFC_PRE_TYPES and unicodedata.normalize("NFC", text) != text:
        return True
    return pre in CASE_CLASS_PRE_TYPES and any(not ch.isascii() and unicodedata.category(ch)[0] in "LM" for ch in text)


def differing_texts(pre: str, reference: dict, folder: Path, engine: str = "labkit") -> list[str]:
    """The probe texts on which ``engine`` gives other ids than llama.cpp under ``pre``."""
    import labkit

    texts = reference["texts"]
    tok = labkit.load(write_probe_gguf(pre, folder, texts), engine=engine)
    want = reference["names"][pre]["digests"]
    return [t for t, d in zip(texts, want) if ids_digest(tok.encode(t, parse_special=False).ids) != d]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.pre_probe", description=__doc__.split("\n")[0])
    parser.add_argument("--write", default=None, metavar="FOLDER",
                        help="instead: write a probe GGUF per name and cases.json there, for tools/make_pre_type_refs.py")
    parser.add_argument("--custom", action="store_true",
                        help="with --write: the names llama.cpp splits with its own code, on custom_split_texts()")
    parser.add_argument("--engine", default="labkit")
    args = parser.parse_args(argv)
    if args.write:
        from labkit.algorithms.pretokenize import LLAMA_CPP_UNSERVED

        folder = Path(args.write)
        texts = custom_split_texts() if args.custom else probe_texts()
        names = CUSTOM_SPLIT_NAMES if args.custom else sorted({*LLAMA_CPP_PRE_NAMES, *LLAMA_CPP_UNSERVED})
        folder.mkdir(parents=True, exist_ok=True)
        cases = []
        for pre in names:
            path = write_probe_gguf(pre, folder, texts)
            cases.append({"name": pre, "path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
        (folder / "cases.json").write_text(json.dumps({"texts": texts, "cases": cases}, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {len(cases)} GGUFs and cases.json to {folder}")
        return 0
    import labkit

    reference, beyond = load_reference(), 0
    with tempfile.TemporaryDirectory() as folder:
        for pre, entry in sorted(reference["names"].items()):
            if "digests" not in entry:
                continue
            try:
                differ = differing_texts(pre, reference, Path(folder), args.engine)
            except labkit.LabkitError as exc:
                print(f"{pre:26s} refused: {exc}")
                continue
            unexplained = [t for t in differ if not documented(pre, t)]
            beyond += bool(unexplained)
            print(f"{pre:26s} {len(reference['texts']) - len(differ)}/{len(reference['texts'])} equal"
                  + (f", {len(differ) - len(unexplained)} documented" if len(differ) > len(unexplained) else "")
                  + (f", DIFFERS on {unexplained[0][:40]!r}" if unexplained else ""))
    return 1 if beyond else 0


if __name__ == "__main__":
    sys.exit(main())
