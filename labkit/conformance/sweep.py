"""``python -m labkit.conformance.sweep``: labkit's own engine against a reference on every code point.

Each code point ``c`` (surrogates left out) is put in a short text that exercises splitting,
numbers, contractions and repeats (``TEMPLATE``) and encoded by ``engine="labkit"`` and by the
reference engine, special tokens not parsed; the code points whose ids differ are listed. This
is how the Unicode-table differences between Python's ``unicodedata``/``regex`` and the
references' own tables were found and checked (notebook ``01_bytes_and_unicode``, section 7).
A full sweep took 37-50 s per vocabulary here (2 cores).

From a shell: ``python -m labkit.conformance.sweep qwen2 --reference hf``
"""
from __future__ import annotations

import argparse
from typing import Iterable

from tqdm import tqdm

import labkit

TEMPLATE = "a{c}b 1{c}'s {c}{c}"
LAST = 0x10FFFF


def code_points(start: int = 0, stop: int = LAST + 1) -> Iterable[int]:
    """The code points in ``[start, stop)`` that a str can hold on its own (no surrogates).

    Example:
        >>> list(code_points(0xD7FE, 0xE001))
        [55294, 55295, 57344]
    """
    for cp in range(max(0, start), min(stop, LAST + 1)):
        if not 0xD800 <= cp <= 0xDFFF:
            yield cp


def sweep(source, reference: str, *, start: int = 0, stop: int = LAST + 1, template: str = TEMPLATE,
          progress: bool = False) -> list[int]:
    """The code points in ``[start, stop)`` whose text (``template``) labkit's engine and
    ``reference`` encode to different ids.

    Example:
        >>> sweep("gpt2", "tiktoken", start=0x300, stop=0x310)
        []
    """
    ours = labkit.load(source, engine="labkit")
    theirs = labkit.load(source, engine=reference)
    points = code_points(start, stop)
    if progress:
        points = tqdm(points, total=max(0, min(stop, LAST + 1) - max(0, start)), unit="cp", desc=f"{source} vs {reference}")
    differ = []
    for cp in points:
        text = template.format(c=chr(cp))
        if ours.encode(text, parse_special=False).ids != theirs.encode(text, parse_special=False).ids:
            differ.append(cp)
    return differ


def main(argv: list[str] | None = None) -> int:
    """Sweep one tokenizer; print the differing code points (the first 20); 1 if any differ."""
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a bundled name or a tokenizer file or folder")
    parser.add_argument("--reference", required=True, choices=["hf", "tiktoken", "sentencepiece"])
    parser.add_argument("--start", type=lambda v: int(v, 0), default=0, help="first code point (default 0)")
    parser.add_argument("--stop", type=lambda v: int(v, 0), default=LAST + 1, help="end, exclusive (default 0x110000)")
    args = parser.parse_args(argv)
    if not 0 <= args.start < args.stop <= LAST + 1:
        parser.error(f"need 0 <= start < stop <= 0x110000, got {args.start:#x}..{args.stop:#x}")
    differ = sweep(args.source, args.reference, start=args.start, stop=args.stop, progress=True)
    print(f"{args.source}: {len(differ):,} code points differ from {args.reference} in {TEMPLATE!r}"
          + (": " + ", ".join(f"U+{cp:04X}" for cp in differ[:20]) if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
