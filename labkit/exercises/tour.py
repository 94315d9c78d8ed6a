"""Checkers for the "Try it" exercises of notebook 00 (the tour of six tokenizers).

Each checker works the right answer out with a reference engine, compares it with yours,
prints ``right`` or ``wrong`` with a hint, and returns True/False.
Introduced in notebook ``00_tour``.

Example:
    >>> from labkit.exercises.tour import check_token_count
    >>> check_token_count("gpt2", " hello world", 2)
    right
    True
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from labkit.core import LabkitError
from labkit.exercises import spelling, unanswered
from labkit.exercises import verdict as _verdict

# the reference engine used for each bundled name in the tour
TOUR_REFERENCE = {
    "gpt2": "tiktoken",
    "llama-spm": "sentencepiece",
    "qwen2": "tiktoken",
    "bert-bge": "hf",  # read from minilm, the same vocabulary's tokenizer.json: the hf engine refuses a bert GGUF
    "botchan-unigram": "sentencepiece",
    "cl100k_base": "tiktoken",
}
# where the reference reads a name from another file: bert-bge's vocabulary as a tokenizer.json
TOUR_SOURCE = {"bert-bge": "minilm"}


def _tour_name(name: str) -> str | None:
    """The tour's name for ``name`` as a reader may spell it ("GPT-2", "Qwen2", "cl100k"), or None."""
    wanted = spelling(name)
    for known in TOUR_REFERENCE:
        if wanted in (spelling(known), spelling(known.removesuffix("_base"))):
            return known
    return None


@lru_cache(maxsize=None)
def _reference(name: str):
    from labkit.factory import load

    known = _tour_name(name)
    if known is None:
        raise LabkitError(f"the tour's checkers know {', '.join(TOUR_REFERENCE)}, not {name!r}")
    return load(TOUR_SOURCE.get(known, known), engine=TOUR_REFERENCE[known])


def check_token_count(name: str, text: str, answer: int) -> bool:
    """How many tokens does tokenizer ``name`` make of ``text`` (no BOS/EOS)?

    Example:
        >>> from labkit.exercises.tour import check_token_count
        >>> check_token_count("cl100k_base", "Hello world", 2)
        right
        True

    Introduced in notebook ``00_tour``.
    """
    if unanswered(answer):
        return None
    right = len(_reference(name).encode(text).ids)
    direction = "too many" if answer > right else "too few"
    return _verdict(answer == right, f"{answer} is {direction}; encode it and count: labkit.load({_tour_name(name)!r}).encode(text).ids")


def check_tokens(name: str, text: str, answer: Sequence[str]) -> bool:
    """Which tokens, in the model's own spelling, does ``name`` make of ``text``?

    Example:
        >>> from labkit.exercises.tour import check_tokens
        >>> check_tokens("gpt2", " hello", ["Ġhello"])
        right
        True

    Introduced in notebook ``00_tour``.
    """
    if unanswered(answer):
        return None
    right = _reference(name).encode(text).tokens
    answer = list(answer)
    first = next((k for k, (a, b) in enumerate(zip(answer, right)) if a != b), min(len(answer), len(right)))
    if answer == right:
        hint = ""
    elif first < len(answer) and first < len(right):
        hint = f"token {first} ({answer[first]!r}) is off"
        if answer[first].replace("Ġ", "").replace("▁", "").lstrip("#") == right[first].replace("Ġ", "").replace("▁", "").lstrip("#"):
            hint += ": check the space mark (byte-level 'Ġ', SentencePiece '▁') or the '##' of a WordPiece continuation"
    else:
        hint = f"the first {first} tokens are right, then you have {'too many' if len(answer) > len(right) else 'too few'}"
    return _verdict(answer == right, hint)


def check_fewest_tokens(text: str, answer: str, names: Sequence[str] = tuple(TOUR_REFERENCE)) -> bool:
    """Which of ``names`` needs the fewest tokens for ``text``? (ties: the first in ``names``)

    Example:
        >>> from labkit.exercises.tour import check_fewest_tokens
        >>> check_fewest_tokens("Hello world", "gpt2", ["gpt2", "botchan-unigram"])
        right
        True

    Introduced in notebook ``00_tour``.
    """
    if unanswered(answer):
        return None
    counts = {name: len(_reference(name).encode(text).ids) for name in names}
    best = min(names, key=lambda name: counts[name])
    chosen = _tour_name(answer)
    if chosen not in counts:
        return _verdict(False, f"{answer!r} is not one of {', '.join(names)}")
    hint = (f"{chosen} needs {counts[chosen]} tokens here and another needs fewer; a bigger vocabulary "
            "trained on similar text usually needs fewer tokens")
    return _verdict(chosen == best, hint)


def check_round_trip(name: str, text: str, answer: bool) -> bool:
    """Does ``decode(encode(text))`` give ``text`` back exactly for tokenizer ``name``?

    Example:
        >>> from labkit.exercises.tour import check_round_trip
        >>> check_round_trip("gpt2", "Hello", True)
        right
        True

    Introduced in notebook ``00_tour``.
    """
    if unanswered(answer):
        return None
    tok = _reference(name)
    back = tok.decode(tok.encode(text).ids)
    right = back == text
    if right:
        hint = "nothing is lost here: byte-level and byte-fallback vocabularies give every character back"
    else:
        lost = next((k for k, (a, b) in enumerate(zip(text, back)) if a != b), min(len(text), len(back)))
        hint = (f"look at character {lost} of the text: lowercasing, Unicode normalisation, squeezed "
                "spaces and <unk> all lose text")
    return _verdict(bool(answer) == right, hint)
