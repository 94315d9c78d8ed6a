"""Timing helpers shared by the benchmark suites: medians over repeats, MB/s, the corpus,
and the skeleton of the throughput suites (bpe, spm, wordpiece, unigram): labkit timed cold
and warm, the references timed in the same run with an untimed exactness check, ratio
columns, and one ``main``.

Example (timings vary, so only their kind is shown):
    >>> import labkit
    >>> from labkit.bench.harness import median_seconds
    >>> tok = labkit.load("gpt2", engine="labkit")
    >>> median_seconds(lambda: tok.encode("Hello world"), repeat=3) > 0
    True
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from typing import Callable, Sequence, Union

from labkit.paths import data_path

# a throughput workload: one long text, or lines each encoded on its own
Workload = Union[str, Sequence[str]]
LABKIT_PLAN = (("cold", "encode"), ("warm", "encode"), ("warm", "encode_ordinary"))


def corpus(megabytes: float = 1.0) -> str:
    """botchan.txt repeated, then cut at a line end, to about ``megabytes`` MB of UTF-8 (a size
    below one copy of botchan gives its first lines, not the whole book)."""
    text = data_path("corpus/botchan.txt").read_text(encoding="utf-8")
    target = max(1, int(megabytes * 1_000_000))
    size = len(text.encode("utf-8"))
    data = (text * (target // size + 1)).encode("utf-8")[:target].decode("utf-8", "ignore")
    line_end = data.rfind("\n")
    return data[: line_end + 1] if line_end > 0 else data


def corpus_lines() -> list[str]:
    """botchan.txt's non-empty lines."""
    return [l for l in data_path("corpus/botchan.txt").read_text(encoding="utf-8").split("\n") if l.strip()]


def median_seconds(fn: Callable[[], object], repeat: int = 5, warmup: int = 0) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs (after ``warmup`` untimed runs)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def table(rows: list[dict], columns: list[str]) -> str:
    """A plain-text table for terminal output."""
    widths = {c: max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines += ["  ".join(_fmt(r.get(c)).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return "" if value is None else str(value)


# ----------------------------------------------------------------------------- throughput suites


def workload_megabytes(work: Workload) -> float:
    """Size of a workload in MB of UTF-8.

    Example:
        >>> workload_megabytes("ab"), workload_megabytes(["é", "a"])
        (2e-06, 3e-06)
    """
    if isinstance(work, str):
        return len(work.encode("utf-8")) / 1e6
    return sum(len(text.encode("utf-8")) for text in work) / 1e6


def over(fn: Callable[[str], object], work: Workload) -> Callable[[], object]:
    """A no-argument call running ``fn`` on the workload: the text, or each line in turn.

    Example:
        >>> over(str.upper, "ab")(), over(str.upper, ["a", "b"])()
        ('AB', ['A', 'B'])
    """
    if isinstance(work, str):
        return lambda: fn(work)
    return lambda: [fn(text) for text in work]


def ordinary_ids(tok, work: Workload) -> list:
    """labkit's ids for the workload (``encode_ordinary``): one list, or one list per line.

    Example:
        >>> import labkit
        >>> ordinary_ids(labkit.load("gpt2", engine="labkit"), ["a b", "c"])
        [[64, 275], [66]]
    """
    return over(tok.encode_ordinary, work)()


def labkit_rows(tok, work: Workload, repeat: int, *, vocab: str, plan=LABKIT_PLAN) -> list[dict]:
    """Rows timing a labkit tokenizer, one per (``"cold"``/``"warm"``, method) of ``plan``:
    cold empties the word cache (``tok.clear_cache()``) before each run, warm runs once
    untimed first. The warm ``encode`` row says (untimed) whether its ids are ``encode_ordinary``'s.

    Introduced in notebook ``02_bpe_byte_level``.

    Example:
        >>> import labkit
        >>> rows = labkit_rows(labkit.load("gpt2", engine="labkit"), "Hello world", 1, vocab="gpt2")
        >>> [(row["engine"], row.get("exact")) for row in rows]
        [('labkit cold encode', None), ('labkit warm encode', True), ('labkit warm encode_ordinary', None)]
    """
    rows = []
    for temperature, method in plan:
        call = over(getattr(tok, method), work)
        if temperature == "cold":
            def timed(call=call):
                tok.clear_cache()
                return call()
        else:
            call()  # fill the cache
            timed = call
        row = dict(vocab=vocab, engine=f"labkit {temperature} {method}", seconds=median_seconds(timed, repeat))
        if (temperature, method) == ("warm", "encode"):
            encode_ids = over(lambda text: tok.encode(text, parse_special=False).ids, work)()
            row["exact"] = encode_ids == ordinary_ids(tok, work)
        rows.append(row)
    return rows


def reference_row(vocab: str, engine: str, fn: Callable[[str], object], work: Workload, repeat: int, *,
                  expected=None, ids: Callable[[object], list[int]] = list) -> dict:
    """A row timing ``fn`` over the workload; with ``expected`` (labkit's ids: a list, or one
    list per line) an ``exact`` flag, from an untimed run whose outputs ``ids`` turns into id lists.

    Introduced in notebook ``02_bpe_byte_level``.

    Example:
        >>> import labkit
        >>> hf = labkit.load("gpt2", engine="hf").backend
        >>> expected = ordinary_ids(labkit.load("gpt2", engine="labkit"), "Hello world")
        >>> row = reference_row("gpt2", "tokenizers encode", hf.encode, "Hello world", 1, expected=expected, ids=lambda e: e.ids)
        >>> row["engine"], row["exact"]
        ('tokenizers encode', True)
    """
    row = dict(vocab=vocab, engine=engine, seconds=median_seconds(over(fn, work), repeat))
    if expected is not None:
        got = ids(fn(work)) if isinstance(work, str) else [ids(fn(text)) for text in work]
        row["exact"] = got == expected
    return row


def seconds_of(rows: list[dict], engine: str) -> float | None:
    """The timed seconds of the row for ``engine``, None if there is none.

    Example:
        >>> rows = [dict(engine="tokenizers encode", seconds=0.52), dict(engine="labkit warm encode")]
        >>> seconds_of(rows, "tokenizers encode"), seconds_of(rows, "labkit warm encode")
        (0.52, None)
    """
    return next((r["seconds"] for r in rows if r["engine"] == engine and "seconds" in r), None)


def add_rates(rows: list[dict], megabytes: float, ratios: dict[str, str]) -> list[dict]:
    """Add MB/s and, per ``{column: engine}``, the speed relative to that engine's row.

    Example (the labkit row takes half the time, so it is 2x):
        >>> rows = [dict(engine="tokenizers encode", seconds=2.0), dict(engine="labkit warm encode", seconds=1.0)]
        >>> [row["x tokenizers"] for row in add_rates(rows, 1.0, {"x tokenizers": "tokenizers encode"})]
        [1.0, 2.0]
    """
    bases = {column: seconds_of(rows, engine) for column, engine in ratios.items()}
    for row in rows:
        if "seconds" not in row:
            continue
        row["MB/s"] = megabytes / row["seconds"]
        for column, base in bases.items():
            if base:
                row[column] = base / row["seconds"]
    return rows


def single_thread() -> None:
    """Pin the references to one thread (tokenizers uses rayon for batches).

    Example:
        >>> import os
        >>> single_thread()
        >>> os.environ["TOKENIZERS_PARALLELISM"] in ("false", "true")
        True
    """
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def corpus_workload(megabytes: float) -> tuple[str, str]:
    """(botchan repeated to about ``megabytes`` MB, a line describing it)."""
    text = corpus(megabytes)
    return text, f"corpus: botchan.txt repeated, {len(text.encode('utf-8')) / 1e6:.2f} MB"


def throughput_main(argv: list[str] | None, *, suite: str, doc: str, vocabs: Sequence[str], measure: Callable,
                    columns: list[str], workload: Callable[[float], tuple[Workload, str]] = corpus_workload) -> int:
    """The ``main`` of a throughput suite: ``--mb``, ``--repeat``, ``--vocab``; one thread; the
    table of ``measure(name, work, repeat)`` rows; exit status 1 if a row is not exact.

    Example (a 2 KB run of the spm suite; the table, with its timings, is not shown):
        >>> import contextlib, io
        >>> from labkit.bench.spm import COLUMNS, VOCABS, measure
        >>> with contextlib.redirect_stdout(io.StringIO()) as printed:
        ...     status = throughput_main(["--mb", "0.002", "--repeat", "1", "--vocab", "botchan-bpe"],
        ...                              suite="spm", doc="spm", vocabs=VOCABS, measure=measure, columns=COLUMNS)
        >>> status, printed.getvalue().splitlines()[1].split()
        (0, ['vocab', 'engine', 'MB/s', 'x', 'sentencepiece', 'exact'])
    """
    parser = argparse.ArgumentParser(prog=f"python -m labkit.bench {suite}", description=doc.split("\n")[0])
    parser.add_argument("--mb", type=float, default=1.0, help="workload size in MB (botchan repeated)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per engine (median)")
    parser.add_argument("--vocab", action="append", choices=list(vocabs), help="vocab(s) to run (default: all)")
    args = parser.parse_args(argv or [])
    if not 0 < args.mb <= 1000 or args.repeat < 1:
        parser.error(f"--mb must be in (0, 1000] and --repeat >= 1, got --mb {args.mb} --repeat {args.repeat}")
    single_thread()
    work, description = workload(args.mb)
    print(f"{description}; median of {args.repeat}, single thread")
    rows = []
    for name in args.vocab or vocabs:
        rows.extend(measure(name, work, args.repeat))
    print(table(rows, columns))
    return 1 if any(row.get("exact") is False for row in rows) else 0
