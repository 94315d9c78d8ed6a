"""Timing helpers shared by the benchmark suites: medians over repeats, MB/s, the corpus,
and the rows of the throughput suites (bpe, spm, wordpiece, unigram), each on botchan.txt
repeated, one thread, every engine timed in the same run (median of ``--repeat`` runs):
labkit *cold* (word cache emptied before each run) and *warm* (filled by an untimed run
first), ``encode`` (a full Encoding) and ``encode_ordinary`` (ids only); then the
references, each with an untimed exactness check; then ratio columns. Each suite's
``main`` is :func:`labkit.bench.compare.suite_main`.

Example (timings vary, so only their kind is shown):
    >>> import labkit
    >>> from labkit.bench.harness import median_seconds
    >>> tok = labkit.load("gpt2", engine="labkit")
    >>> median_seconds(lambda: tok.encode("Hello world"), repeat=3) > 0
    True
"""
from __future__ import annotations

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


def best_ms(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs of ``fn()``, in milliseconds of wall time: the run the
    machine disturbed least (the notebooks' scaling curves and thread pools use it).

    Example:
        >>> from labkit.bench.harness import best_ms
        >>> best_ms(lambda: sum(range(1000)), repeat=2) > 0
        True
    """
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times) * 1e3


def table(rows: list[dict], columns: list[str]) -> str:
    """A plain-text table for terminal output (the header alone when there are no rows).

    Example:
        >>> from labkit.bench.harness import table
        >>> table([{"vocab": "gpt2", "ratio": 0.25}], ["vocab", "ratio"]).splitlines()
        ['vocab  ratio', 'gpt2   0.25 ']
        >>> table([], ["vocab", "ratio"])
        'vocab  ratio'
    """
    widths = {c: max([len(c), *(len(_fmt(r.get(c))) for r in rows)]) for c in columns}
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


def encoding_ids(encoding) -> list[int]:
    """The ids of a ``tokenizers`` Encoding (what a reference row compares with labkit's ids)."""
    return encoding.ids


def vocab_rows(name: str, work: Workload, repeat: int, references, *, ratio_column: str) -> list[dict]:
    """Rows of MB/s for one bundled vocab: labkit cold and warm (:func:`labkit_rows`), then each
    reference ``(row label, its library's call on a text, ids of what it returns)``, checked
    against labkit's ids; ``ratio_column`` is every row's speed against the first reference.

    Example:
        >>> import labkit
        >>> hf = labkit.load("minilm", engine="hf").backend
        >>> plain = lambda text: hf.encode(text, add_special_tokens=False)  # labkit's rows add none either
        >>> rows = vocab_rows("minilm", "Hello world", 1, [("tokenizers encode", plain, encoding_ids)],
        ...                   ratio_column="x tokenizers")
        >>> [(row["engine"], row.get("exact")) for row in rows][2:], rows[-1]["x tokenizers"]
        ([('labkit warm encode_ordinary', None), ('tokenizers encode', True)], 1.0)
    """
    import labkit

    tok = labkit.load(name, engine="labkit")
    rows = labkit_rows(tok, work, repeat, vocab=name)
    expected = ordinary_ids(tok, work)
    for label, fn, ids in references:
        rows.append(reference_row(name, label, fn, work, repeat, expected=expected, ids=ids))
    return add_rates(rows, workload_megabytes(work), {ratio_column: references[0][0]})


def tokenizers_backend(name: str):
    """The ``tokenizers.Tokenizer`` for ``name``: the hf engine's backend, or, for a SentencePiece
    ``.model`` (which that engine refuses), tokenizers' conversion of the file.

    Example:
        >>> from labkit.bench.harness import tokenizers_backend
        >>> type(tokenizers_backend("botchan-unigram")).__name__
        'Tokenizer'
    """
    import labkit
    from labkit.factory import convert_model_file

    try:
        return labkit.load(name, engine="hf").backend
    except labkit.LabkitError:
        return convert_model_file(name).backend  # a .model, which the hf engine refuses
