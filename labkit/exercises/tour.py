"""Checkers for the "Try it" exercises of notebook 00 (the tour of six tokenizers).

Each checker works the right answer out with a reference engine, compares it with yours,
prints ``right`` or ``wrong`` with a hint, and returns True/False.
Introduced in notebook ``00_tour``.

Example: ``check_token_count("gpt2", " hello world", 2)`` prints ``right`` and returns True
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from labkit.core import LabkitError
from labkit.exercises import verdict as _verdict

# the reference engine used for each bundled name in the tour
TOUR_REFERENCE = {
    "gpt2": "tiktoken",
    "llama-spm": "sentencepiece",
    "qwen2": "tiktoken",
    "bert-bge": "hf",
    "botchan-unigram": "sentencepiece",
    "cl100k_base": "tiktoken",
}


@lru_cache(maxsize=None)
def _reference(name: str):
    from labkit.factory import load

    if name not in TOUR_REFERENCE:
        raise LabkitError(f"the tour's checkers know {', '.join(TOUR_REFERENCE)}, not {name!r}")
    return load(name, engine=TOUR_REFERENCE[name])


def check_token_count(name: str, text: str, answer: int) -> bool:
    """How many tokens does tokenizer ``name`` make of ``text`` (no BOS/EOS)?

    Example: ``check_token_count("cl100k_base", "Hello world", 2)`` -> True
    Introduced in notebook ``00_tour``.
    """
    right = len(_reference(name).encode(text).ids)
    return _verdict(answer == right, f"encode it and count: labkit.load({name!r}).encode(text).ids")


def check_tokens(name: str, text: str, answer: Sequence[str]) -> bool:
    """Which tokens, in the model's own spelling, does ``name`` make of ``text``?

    Example: ``check_tokens("gpt2", " hello", ["Ġhello"])`` -> True
    Introduced in notebook ``00_tour``.
    """
    right = _reference(name).encode(text).tokens
    hint = "byte-level vocabularies write a space as 'Ġ', SentencePiece as '▁', WordPiece continuations start with '##'"
    return _verdict(list(answer) == right, hint)


def check_fewest_tokens(text: str, answer: str, names: Sequence[str] = tuple(TOUR_REFERENCE)) -> bool:
    """Which of ``names`` needs the fewest tokens for ``text``? (ties: the first in ``names``)

    Example: ``check_fewest_tokens("Hello world", "gpt2", ["gpt2", "botchan-unigram"])`` -> True
    Introduced in notebook ``00_tour``.
    """
    counts = {name: len(_reference(name).encode(text).ids) for name in names}
    best = min(names, key=lambda name: counts[name])
    return _verdict(answer == best, "a bigger vocabulary trained on similar text usually needs fewer tokens")


def check_round_trip(name: str, text: str, answer: bool) -> bool:
    """Does ``decode(encode(text))`` give ``text`` back exactly for tokenizer ``name``?

    Example: ``check_round_trip("gpt2", "Hello", True)`` -> True
    Introduced in notebook ``00_tour``.
    """
    tok = _reference(name)
    right = tok.decode(tok.encode(text).ids) == text
    return _verdict(bool(answer) == right, "lowercasing, Unicode normalisation, squeezed spaces and <unk> all lose text")
