"""Two small probes the performance notebooks share: the libraries' own ids-only calls, and
a counter thread that shows whether a call lets go of the GIL.

Introduced in notebooks ``12_performance`` (``ids_only``) and ``15_serving_metrics``
(``steps_beside``); one copy here so the notebook and its worked answers run the same probe.

Example:
    >>> import labkit
    >>> from labkit.bench.probes import ids_only
    >>> ids_only(labkit.load("gpt2", engine="tiktoken"))("Hello world")
    [15496, 995]
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from labkit.core import Tokenizer


def ids_only(tok: Tokenizer) -> Callable[[str], list[int]]:
    """The fastest way each library gives ids for plain text (no Encoding, no offsets).

    Example:
        >>> import labkit
        >>> from labkit.bench.probes import ids_only
        >>> tok = labkit.load("gpt2", engine="hf")
        >>> ids_only(tok)("Hello world") == labkit.load("gpt2").encode_ordinary("Hello world")
        True
    """
    if tok.engine == "labkit":
        return tok.encode_ordinary
    if tok.engine == "hf":
        return lambda text: tok.backend.encode(text, add_special_tokens=False).ids
    if tok.engine == "tiktoken":
        return tok.backend.encode_ordinary
    return tok.backend.encode  # sentencepiece: ids, no BOS


def steps_beside(fn: Callable[[], object]) -> int:
    """Python loop steps another thread makes while ``fn()`` runs (forced switches made rare).

    Pure Python holds the GIL, so the counter stands still; a call that releases it (the
    ``regex`` module on a long ``str``, most of a Rust or C++ library) lets the counter run.

    Example:
        >>> from labkit.bench.probes import steps_beside
        >>> steps_beside(lambda: sum(range(200_000)))  # pure Python: the counter waits
        0
    """
    state = {"count": 0, "stop": False}

    def counter():
        n = 0
        while not state["stop"]:
            n += 1
            if n % 200 == 0:
                state["count"] = n
                time.sleep(0)  # let go of the GIL now and then, so the caller can get it back

    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    thread = threading.Thread(target=counter)
    try:
        thread.start()
        before = state["count"]
        fn()
        moved = state["count"] - before
    finally:
        state["stop"] = True
        sys.setswitchinterval(old)
        thread.join()
    return moved


def lets_others_run(fn: Callable[[], object], tries: int = 16) -> bool:
    """True once :func:`steps_beside` sees another thread move during ``fn()``, trying up to
    ``tries`` times: on a busy machine the counter thread may get no CPU in a short release,
    so one still counter proves nothing, while a pure-Python call never moves it.

    Example:
        >>> from labkit.bench.probes import lets_others_run
        >>> lets_others_run(lambda: sum(range(200_000)), tries=2)
        False
    """
    return any(steps_beside(fn) > 0 for _ in range(tries))
