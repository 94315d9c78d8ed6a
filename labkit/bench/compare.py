"""labkit against a reference twice over: against labkit's wrapper of the reference engine and
against the reference library called directly, in CPU time, A/B interleaved, medians.

Each round times every call once, in the same order, so a load spike on the shared machine
hits all of them alike; the reported figure is the median of the rounds. References run on
one thread. "vs wrapper" is the wrapper's seconds over the row's, "vs direct" the library's
seconds over the row's (above 1: the row is faster).
Introduced in notebook ``12_performance``.

Example (timings vary, so only the names and exactness are shown):
    >>> from labkit.bench.compare import TOKENIZERS, measure
    >>> row = measure("minilm", "tiny", "Hello world", [TOKENIZERS], 1)[1]
    >>> row["engine"], sorted(key for key in row if key.startswith("vs"))
    ('labkit warm encode', ['vs direct', 'vs wrapper'])
"""
from __future__ import annotations

import gc
import statistics
import time
import unicodedata
from dataclasses import dataclass
from typing import Callable

import labkit
from labkit.bench.harness import single_thread, table
from labkit.bench.texts import TEXTS, bench_texts
from labkit.core import LabkitError


def interleaved(calls: dict[str, Callable[[], object] | tuple[Callable[[], object], Callable[[], object]]],
                repeat: int) -> dict[str, float]:
    """Median CPU seconds of each call, the calls taking turns round by round. A call given as
    ``(setup, call)`` has ``setup()`` run untimed before each timed ``call()`` (emptying a
    cache, loading a fresh tokenizer).

    Example:
        >>> seconds = interleaved({"sum": lambda: sum(range(1000)), "none": (list, lambda: None)}, repeat=1)
        >>> sorted(seconds), all(value >= 0 for value in seconds.values())
        (['none', 'sum'], True)
    """
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            if isinstance(call, tuple):
                setup, call = call
                setup()
            gc.collect()
            started = time.process_time()
            call()
            times[name].append(time.process_time() - started)
    return {name: statistics.median(values) for name, values in times.items()}


@dataclass(frozen=True)
class Reference:
    """A reference engine: its factory name, label, and how to call its library directly.

    Example:
        >>> import labkit
        >>> backend = labkit.load("minilm", engine=TOKENIZERS.engine).backend
        >>> TOKENIZERS.decode(backend, TOKENIZERS.encode(backend, "hello world"))
        'hello world'
    """

    engine: str
    label: str
    encode: Callable  # (backend, text) -> ids
    decode: Callable  # (backend, ids) -> str


TIKTOKEN = Reference("tiktoken", "tiktoken", lambda b, text: b.encode(text, allowed_special="all"),
                     lambda b, ids: b.decode(ids))
TOKENIZERS = Reference("hf", "tokenizers", lambda b, text: b.encode(text, add_special_tokens=False).ids,
                       lambda b, ids: b.decode(ids, skip_special_tokens=False))
SENTENCEPIECE = Reference("sentencepiece", "sentencepiece", lambda b, text: b.encode(text),
                          lambda b, ids: b.decode(ids))

COLUMNS = ["vocab", "text", "engine", "MB/s", "vs wrapper", "vs direct", "exact"]


def measure(name: str, text_name: str, text: str, references: list[Reference], repeat: int,
            first: bool = False) -> list[dict]:
    """Rows for one vocab and text: labkit cold/warm encode and decode, then each reference
    through labkit's wrapper and called directly; ratios against the first reference.

    *cold* is an encode after ``clear_cache()`` (no word cached; what the tokenizer learnt of
    pairs of ids, its pair memo, kept); with ``first`` a row *first* too: the first encode of a
    tokenizer loaded just before (untimed), with nothing learnt at all.

    Example:
        >>> rows = measure("minilm", "tiny", "Hello world", [TOKENIZERS], 1, first=True)
        >>> [row["engine"] for row in rows][:4], rows[4]["exact"]
        (['labkit first encode', 'labkit cold encode', 'labkit warm encode', 'labkit decode'], True)
    """
    tok = labkit.load(name, engine="labkit")
    ids = tok.encode(text).ids
    calls: dict = {}
    exact: dict[str, bool] = {}
    if first:
        fresh = {}

        def load_fresh():
            fresh["tok"] = None  # the last one goes first: two in memory at once cost the GC
            fresh["tok"] = labkit.load(name, engine="labkit")

        calls["labkit first encode"] = (load_fresh, lambda: fresh["tok"].encode(text).ids)
    calls["labkit cold encode"] = (tok.clear_cache, lambda: tok.encode(text).ids)
    calls["labkit warm encode"] = lambda: tok.encode(text).ids
    calls["labkit decode"] = lambda: tok.decode(ids)
    served = []
    for ref in references:
        try:
            wrapper = labkit.load(name, engine=ref.engine)
        except LabkitError:
            continue  # this reference cannot serve the vocab
        served.append(ref)
        backend = wrapper.backend
        direct = lambda r=ref, b=backend: r.encode(b, text)  # noqa: E731
        if getattr(wrapper, "_nfc", False):
            # tiktoken has no normaliser: for a vocab that NFC-normalises (Qwen2) its user normalises first
            direct = lambda r=ref, b=backend: r.encode(b, unicodedata.normalize("NFC", text))  # noqa: E731
        exact[f"{ref.label} wrapper encode"] = wrapper.encode(text).ids == ids
        exact[f"{ref.label} direct encode"] = list(direct()) == ids
        calls[f"{ref.label} wrapper encode"] = lambda w=wrapper: w.encode(text).ids
        calls[f"{ref.label} direct encode"] = direct
        calls[f"{ref.label} wrapper decode"] = lambda w=wrapper: w.decode(ids)
        calls[f"{ref.label} direct decode"] = lambda r=ref, b=backend: r.decode(b, ids)
    seconds = interleaved(calls, repeat)
    megabytes = len(text.encode("utf-8")) / 1e6
    primary = served[0].label if served else None
    rows = []
    for engine, value in seconds.items():
        op = engine.rsplit(" ", 1)[1]
        row = dict(vocab=name, text=text_name, engine=engine, seconds=value, **{"MB/s": megabytes / value if value else None})
        if primary is not None and value:
            row["vs wrapper"] = seconds[f"{primary} wrapper {op}"] / value
            row["vs direct"] = seconds[f"{primary} direct {op}"] / value
        if engine in exact:
            row["exact"] = exact[engine]
        rows.append(row)
    return rows


def suite_main(argv, *, suite: str, doc: str, vocabs, references: list[Reference] | dict[str, list[Reference]],
               texts: tuple[str, ...] = TEXTS, make_texts: Callable[..., dict[str, str]] = bench_texts,
               default_mb: float = 0.3, first: bool = False) -> int:
    """``main`` of a comparison suite: ``--mb``, ``--repeat``, ``--vocab``, ``--text``; prints
    one table per vocab; exit status 1 if a reference's ids differ from labkit's. ``references``
    may be a list for every vocab or ``{vocab: list}``; ``texts`` names the texts and ``make_texts(mb, names)`` makes them;
    ``first`` adds the row of a freshly loaded tokenizer's first encode (:func:`measure`).

    Example (the tables, with their timings, are not shown):
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()):
        ...     status = suite_main(["--mb", "0.002", "--repeat", "1", "--text", "botchan"], suite="wordpiece",
        ...                         doc="wordpiece", vocabs=["minilm"], references=[TOKENIZERS])
        >>> status
        0
    """
    import argparse
    import os

    parser = argparse.ArgumentParser(prog=f"python -m labkit.bench {suite}", description=doc.split("\n")[0])
    parser.add_argument("--mb", type=float, default=default_mb, help="size of each text in MB (botchan: at least one copy)")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (median)")
    parser.add_argument("--vocab", action="append", choices=list(vocabs), help="vocab(s) to run (default: all)")
    parser.add_argument("--text", action="append", choices=list(texts), help="text(s) to run (default: all)")
    args = parser.parse_args(argv or [])
    if not 0 < args.mb <= 100 or args.repeat < 1:
        parser.error(f"--mb must be in (0, 100] and --repeat >= 1, got --mb {args.mb} --repeat {args.repeat}")
    single_thread()
    names = tuple(args.text or texts)
    made = make_texts(args.mb, names)
    print(f"CPU time, median of {args.repeat} interleaved rounds, single thread; load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("texts: " + ", ".join(f"{k} {len(made[k].encode()) / 1e6:.2f} MB" for k in names))
    status = 0
    for name in args.vocab or vocabs:
        rows = []
        refs = references[name] if isinstance(references, dict) else references
        for text_name in names:
            rows.extend(measure(name, text_name, made[text_name], refs, args.repeat, first))
        print(table(rows, COLUMNS), flush=True)
        status |= any(row.get("exact") is False for row in rows)
    return int(status)
