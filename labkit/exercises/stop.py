"""Checkers for the "Try it" exercises of notebook 09 (stop sequences and the jail).

Each checker computes the right answer with labkit, compares, prints ``right`` or ``wrong``
with a hint, and returns True/False.
Introduced in notebook ``09_stop_sequences_jail``.

Example:
    >>> from labkit.exercises.stop import check_jail
    >>> check_jail("Say Hello", ["Hello world"], "Hello")
    right
    True
"""
from __future__ import annotations

import random

from labkit.core import LabkitError
from labkit.streaming.stop import StopStringMatcher, stop_reference
from labkit.exercises import unanswered, verdict as _verdict



def check_jail(text: str, stops, answer: str) -> bool:
    """After ``text`` has streamed out, what does the jail hold for these stop strings?

    Example:
        >>> from labkit.exercises.stop import check_jail
        >>> check_jail("a <|im", ["<|im_end|>"], "<|im")
        right
        True
    """
    if unanswered(answer):
        return None
    if not isinstance(answer, str):
        raise LabkitError(f"check_jail: answer must be a str, got {type(answer).__name__}")
    matcher = StopStringMatcher(stops)
    _, reason = matcher.push(text)
    if reason is not None:
        return _verdict(False, f"{reason.value!r} already occurs in the text: generation stopped, the jail is empty")
    right = matcher.jail
    return _verdict(answer == right, "the jail is the longest end of the text that is the start of a stop "
                                     f"string (but not a whole one); it has {len(right)} characters")


def check_shown(text: str, answer: str, *, hidden=(), visible=()) -> bool:
    """What does the reader see in the end, for this text and these hidden/visible stops?

    Example:
        >>> from labkit.exercises.stop import check_shown
        >>> check_shown("ab</a>cd", "ab", hidden=["</a>"])
        right
        True
    """
    if unanswered(answer):
        return None
    right, reason = stop_reference(text, hidden, visible)
    where = "no stop occurs" if reason is None else f"the first stop to complete is {reason.value!r}"
    return _verdict(answer == right, f"{where}; a hidden stop is cut off, a visible one kept, the rest dropped")


# chunk streams the stop-filter exercise is checked on (plus random ones)
_CASES = (
    (["Hello", " test"], ["Hello world"]),
    (["Hello", " wor", "ld!"], ["Hello world"]),
    (["<|", "im", "_start", "|>"], ["<|im_end|>"]),
    (["ab", "cab", "cx"], ["abc", "cabc"]),
    (["x", "😀", "y😀", "z"], ["y😀z", "😀y"]),
    (["no stops here"], ["zz"]),
    (["aaa", "ab"], ["aab"]),
)


def check_stop_filter(fn, *, seed: int = 9, rounds: int = 200) -> bool:
    """Is ``fn(chunks, stops) -> list[str]`` a correct, minimal-delay jail?

    ``fn`` gets the text chunks and the (hidden) stop strings and returns what is shown
    after each chunk (one string per chunk, up to and including the chunk where a stop
    completes; at the end with no stop, one more string for the released jail). Checked
    chunk by chunk against :class:`labkit.StopStringMatcher`, which holds back exactly the
    longest suffix that is a proper prefix of a stop string.

    Example (a filter built on the matcher itself passes):
        >>> def shown_after_each(chunks, stops):
        ...     matcher, shown = StopStringMatcher(stops), []
        ...     for chunk in chunks:
        ...         released, reason = matcher.push(chunk)
        ...         shown.append(released)
        ...         if reason is not None:
        ...             return shown
        ...     return shown + [matcher.release()]
        >>> check_stop_filter(shown_after_each, rounds=20)
        right
        True
    """
    if unanswered(fn):
        return None
    rng = random.Random(seed)
    cases = list(_CASES)
    for _ in range(rounds):
        alphabet = "ab😀"
        stops = list(dict.fromkeys("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
                                   for _ in range(rng.randint(1, 3))))
        chunks = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 8))]
        cases.append((chunks, stops))
    for chunks, stops in cases:
        expected = _expected_releases(chunks, stops)
        try:
            got = fn(list(chunks), list(stops))
        except Exception as exc:  # the reader's code: report, do not crash the notebook
            return _verdict(False, f"fn({chunks!r}, {stops!r}) raised {type(exc).__name__}: {exc}")
        if list(got) != expected:
            return _verdict(False, f"fn({chunks!r}, {stops!r}) returned {list(got)!r}, expected {expected!r}; "
                                   + _filter_hint(list(got), expected))
    return _verdict(True, "")


def _filter_hint(got: list, expected: list[str]) -> str:
    # which part is wrong: the first output that differs, and the likely mistake
    if len(got) != len(expected):
        return (f"{len(got)} outputs for {len(expected)} expected: one per chunk up to the stop, "
                "plus the released jail at the end when no stop fires")
    k = next(k for k, (a, b) in enumerate(zip(got, expected)) if a != b)
    a, b = got[k], expected[k]
    if isinstance(a, str) and len(a) > len(b):
        return f"after chunk {k} you showed {a!r}: {a[len(b):]!r} could still be the start of a stop (or is one)"
    if isinstance(a, str) and len(a) < len(b):
        return f"after chunk {k} you held back {b[len(a):]!r}, which can no longer become a stop: show it"
    return f"after chunk {k} the text shown differs"


def _expected_releases(chunks, stops) -> list[str]:
    matcher = StopStringMatcher(stops)
    out = []
    for chunk in chunks:
        released, reason = matcher.push(chunk)
        out.append(released)
        if reason is not None:
            return out
    out.append(matcher.release())
    return out
