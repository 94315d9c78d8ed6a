"""Checkers for the "Try it" exercises of notebook 08: each prints right or wrong, and why.

An answer still left as ``None`` or ``...`` prints ``not answered yet`` and returns None; a
wrong one names the part that is wrong (which id, which byte cut, which kind of id sequence).

Example:
    >>> from labkit.exercises.stream import check_detokenizer
    >>> import labkit
    >>> check_detokenizer(lambda tok: labkit.DecodeStream(tok), labkit.load("qwen2"))
    right: all 6 kinds of id sequence stream to exactly decode(ids) on ggml-vocab-qwen2.gguf
    True
"""
from __future__ import annotations

import itertools
from typing import Callable

from labkit.core import LabkitError
from labkit.exercises import unanswered

REPLACEMENT = "\ufffd"
# byte strings that hide every UTF-8 trap: split 2/3/4-byte characters, orphan continuation
# bytes, a sequence broken by ASCII, overlong and surrogate leads, a real U+FFFD
UTF8_CASES = (
    "héllo 中文 🫨!".encode(),
    b"\xf0\x9f\xab",
    b"a\x80b\xbf",
    b"\xe4\xb8A\xe6\x96\x87",
    b"\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80",
    "\ufffd real".encode(),
    b"\xc3",
)


def _say(ok: bool, message: str) -> bool:
    print(("right: " if ok else "wrong: ") + message)
    return ok


def check_split_character(tok, ids) -> bool:
    """Right if ``ids`` decode to clean text but at least one id alone decodes to U+FFFD.

    Example:
        >>> import labkit
        >>> from labkit.exercises.stream import check_split_character
        >>> tok = labkit.load("gpt2")
        >>> check_split_character(tok, tok.encode("🫨").ids)
        right: '\\U0001fae8' is 3 ids; alone, 3 of them decode to U+FFFD
        True
    """
    if unanswered(ids):
        return None
    try:
        ids = tok.check_ids(ids, "your ids")
    except LabkitError as exc:
        return _say(False, f"not a list of ids of {tok.name}: {exc}")
    whole = tok.decode(ids)
    if not ids or REPLACEMENT in whole:
        return _say(False, f"decode(ids) = {whole!r} should be clean text with no U+FFFD")
    alone = [tok.decode([i]) for i in ids]
    broken = [i for i, text in zip(ids, alone) if REPLACEMENT in text]
    if not broken:
        return _say(False, f"every id decodes cleanly alone ({alone!r}): no character is split")
    return _say(True, f"{whole!r} is {len(ids)} ids; alone, {len(broken)} of them decode to U+FFFD")


def _run_bytes(decoder, parts) -> str:
    out = [decoder.step(part) or "" for part in parts]
    out.append(decoder.flush() or "")
    return "".join(out)


def check_utf8_decoder(make: Callable[[], object]) -> bool:
    """Right if ``make()`` gives a step(bytes)/flush() decoder equal to ``bytes.decode('utf-8', 'replace')``.

    Every case is fed whole, one byte at a time, and cut at every pair of positions.

    Example:
        >>> from labkit.exercises.stream import check_utf8_decoder
        >>> from labkit.streaming.utf8 import Utf8StreamDecoder
        >>> check_utf8_decoder(Utf8StreamDecoder)  # doctest: +ELLIPSIS
        right: ...
    """
    if unanswered(make):
        return None
    tried = 0
    for data in UTF8_CASES:
        want = data.decode("utf-8", "replace")
        cuts = [[data], [data[k : k + 1] for k in range(len(data))]]
        cuts += [[data[:a], data[a:b], data[b:]] for a, b in itertools.combinations(range(len(data) + 1), 2)]
        for parts in cuts:
            tried += 1
            try:
                got = _run_bytes(make(), parts)
            except Exception as exc:  # a learner's code may raise anything; report it
                return _say(False, f"{parts!r} raised {type(exc).__name__}: {exc}")
            if got != want:
                where = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                return _say(False, f"fed {parts!r}: got {got!r}, want {want!r} (they part at character {where}: "
                                   f"{_what_went_wrong(data, got, want)})")
    return _say(True, f"{tried} ways of cutting {len(UTF8_CASES)} byte strings all decode like Python")


def _what_went_wrong(data: bytes, got: str, want: str) -> str:
    # a hint aimed at the likely mistake
    if got.count(REPLACEMENT) > want.count(REPLACEMENT):
        return "too many U+FFFD: a character cut between two steps must be held, not replaced"
    if got.count(REPLACEMENT) < want.count(REPLACEMENT):
        return "too few U+FFFD: each byte that can never start or continue a character is one U+FFFD"
    return "the characters differ: is a byte read twice or dropped at a cut?"


def detokenizer_cases(tok) -> list[tuple[str, list[int]]]:
    """Named id sequences that catch the usual streaming bugs, built from ``tok``'s own vocabulary."""
    from labkit.streaming.utf8 import byte_token_ids

    text = "Hello world, 中文 🫨 héllo.\n  Done"
    cases = [("a sentence with spaces, CJK and an emoji", list(tok.encode(text).ids)),
             ("words that start with a space", list(tok.encode(" a b c").ids))]
    byte_ids = byte_token_ids(tok)
    if len(byte_ids) == 256:
        word = list(tok.encode(" ok").ids)
        split = [byte_ids[b] for b in "🫨".encode()]
        cases.append(("a character split into single-byte ids", word + split + word))
        cases.append(("a split character at the very end", word + split))
        cases.append(("orphan continuation bytes (a U+FFFD that never completes)", word + [byte_ids[0x80]] * 3 + word))
        cases.append(("a character cut short by the next word (the U+FFFD case)", word + [byte_ids[0xE4], byte_ids[0xB8]] + word))
    return cases


def check_detokenizer(make: Callable[[object], object], tok) -> bool:
    """Right if ``make(tok)`` streams every case so that chunks + flush == ``tok.decode(ids)``.

    Example:
        >>> import labkit
        >>> from labkit.exercises.stream import check_detokenizer
        >>> tok = labkit.load("gpt2")
        >>> check_detokenizer(lambda tok: labkit.DecodeStream(tok), tok)
        right: all 6 kinds of id sequence stream to exactly decode(ids) on ggml-vocab-gpt-2.gguf
        True
    """
    if unanswered(make):
        return None
    cases = detokenizer_cases(tok)
    for name, ids in cases:
        try:
            stream = make(tok)
            chunks = [stream.step(i) for i in ids] + [stream.flush()]
        except Exception as exc:  # a learner's code may raise anything; report it
            return _say(False, f"{name} ({tok.name} ids {ids}): raised {type(exc).__name__}: {exc}")
        got = "".join(c for c in chunks if c)
        want = tok.decode(ids)
        if got != want:
            hint = "chunks joined must equal decode(ids)"
            if REPLACEMENT in got and REPLACEMENT not in want:
                hint = "a chunk ending in U+FFFD was emitted too early: hold it until the character completes"
            elif got.replace(" ", "") == want.replace(" ", ""):
                hint = "spaces differ: decode each new id after a few ids of context, never alone"
            elif len(got) < len(want):
                hint = "text is missing: held ids must come out later (diff from where the last chunk ended) or at flush"
            return _say(False, f"{name} ({tok.name}): chunks {chunks!r} join to {got!r}, decode gives {want!r}; {hint}")
    return _say(True, f"all {len(cases)} kinds of id sequence stream to exactly decode(ids) on {tok.name}")
