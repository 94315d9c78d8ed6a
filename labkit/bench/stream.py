"""``python -m labkit.bench stream``: labkit's DecodeStream next to ``tokenizers``' on 100k tokens.

For each vocabulary, over the same engine, in one run: tokens per second of
``labkit.DecodeStream`` and of ``tokenizers.decoders.DecodeStream`` (stepping the engine's
own ``tokenizers.Tokenizer``), their ratio, and for each the time of the last 10% of the
tokens over the time of the first 10% (about 1 when the cost per token does not grow with
the position). Medians over ``--repeat`` runs, the two streams interleaved.

Introduced in notebook ``08_incremental_detokenization``.

From a shell: ``python -m labkit.bench stream --tokens 100000 --vocab gpt2``
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time

from labkit.bench.harness import corpus, table
from labkit.core import EngineUnavailable

# byte-level BPE twice and WordPiece: vocabularies the hf engine serves (it refuses a llama GGUF)
DEFAULT_VOCABS = ("gpt2", "qwen2", "minilm")


def corpus_ids(tok, count: int) -> list[int]:
    """The first ``count`` ids of botchan.txt (repeated as needed) under ``tok``."""
    ids: list[int] = []
    megabytes = 0.3
    while len(ids) < count:
        ids = list(tok.encode(corpus(megabytes), parse_special=False).ids)
        megabytes *= 2
    return ids[:count]


SLICE = 200  # tokens per timed slice when comparing the first and the last 10%


def throughput(step, ids: list[int]) -> float:
    """CPU seconds to step every id through one fresh stream."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        for i in ids:
            step(i)
        return time.process_time() - t0
    finally:
        gc.enable()


def flatness(make_step, ids: list[int]) -> float:
    """Time of the last 10% of ids over the time of the first 10%, for one stream.

    Two streams run side by side: one fresh (it steps the first 10%), one already advanced
    through the first 90% (it steps the last 10%). Their slices of ``SLICE`` ids alternate,
    so a change in the load of a shared machine hits both alike; medians of the slices are
    compared.
    """
    tenth = max(1, len(ids) // 10)
    head, tail = ids[:tenth], ids[len(ids) - tenth :]
    fresh, advanced = make_step(), make_step()
    for i in ids[: len(ids) - tenth]:
        advanced(i)
    clock = time.process_time  # CPU time: the neighbours of a shared machine count less
    firsts, lasts = [], []
    gc.collect()
    gc.disable()
    try:
        for lo in range(0, tenth, SLICE):
            t0 = clock()
            for i in head[lo : lo + SLICE]:
                fresh(i)
            t1 = clock()
            for i in tail[lo : lo + SLICE]:
                advanced(i)
            t2 = clock()
            firsts.append(t1 - t0)
            lasts.append(t2 - t1)
    finally:
        gc.enable()
    return statistics.median(lasts) / statistics.median(firsts)


def measure(tok, ids: list[int], repeat: int) -> dict:
    """Median throughput and flatness of both streams over ``ids``, in one run."""
    from tokenizers.decoders import DecodeStream as ReferenceStream

    from labkit.streaming.decode_stream import DecodeStream

    backend = tok.backend

    def ours():
        return DecodeStream(tok).step

    def theirs():
        reference = ReferenceStream(skip_special_tokens=False)
        return lambda i: reference.step(backend, i)

    times = {"labkit": [], "tokenizers": []}
    flats = {"labkit": [], "tokenizers": []}
    # the same ids at both ends: what is left is the position alone (no content effect)
    tenth = max(1, len(ids) // 10)
    same_content = ids[: len(ids) - tenth] + ids[:tenth]
    same = []
    for _ in range(repeat):
        for name, make in (("labkit", ours), ("tokenizers", theirs)):
            times[name].append(throughput(make(), ids))
            flats[name].append(flatness(make, ids))
        same.append(flatness(ours, same_content))
    rate = {name: len(ids) / statistics.median(values) for name, values in times.items()}
    return {
        "labkit tok/s": rate["labkit"],
        "tokenizers tok/s": rate["tokenizers"],
        "ratio": rate["labkit"] / rate["tokenizers"],
        "flat labkit": statistics.median(flats["labkit"]),
        "flat tokenizers": statistics.median(flats["tokenizers"]),
        "flat labkit same ids": statistics.median(same),
    }


def check_same_text(tok, ids: list[int]) -> bool:
    """Both streams' chunks, joined, equal decode(ids) (a correctness check before timing)."""
    from labkit.streaming.decode_stream import DecodeStream

    stream = DecodeStream(tok)
    text = "".join(stream.step_batch(ids)) + (stream.flush() or "")
    return text == tok.decode(ids)


def main(argv: list[str] | None = None) -> int:
    """Print the stream benchmark; returns 0 (timings are reported, never asserted)."""
    import labkit

    parser = argparse.ArgumentParser(prog="python -m labkit.bench stream", description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=100_000, help="ids streamed per run (default 100000)")
    parser.add_argument("--vocab", action="append", help=f"bundled vocab (repeatable; default {' '.join(DEFAULT_VOCABS)})")
    parser.add_argument("--engine", default="hf", help="engine both streams run over (default hf: tokenizers')")
    parser.add_argument("--repeat", type=int, default=3, help="runs per stream; medians are shown (default 3)")
    args = parser.parse_args(argv or [])
    rows = []
    for name in args.vocab or DEFAULT_VOCABS:
        try:
            tok = labkit.load(name, engine=args.engine)
        except EngineUnavailable as exc:
            print(f"{name}: skipped: {exc}")
            continue
        if tok.backend is None or not hasattr(tok.backend, "decode_batch"):
            print(f"{name}: engine {tok.engine!r} has no tokenizers backend to compare with; skipped")
            continue
        ids = corpus_ids(tok, args.tokens)
        row = {"vocab": name, "engine": tok.engine, "tokens": len(ids), "exact": check_same_text(tok, ids)}
        row.update(measure(tok, ids, max(1, args.repeat)))
        rows.append(row)
    print(
        f"DecodeStream throughput over the same engine, botchan.txt ids, CPU time, median of {args.repeat} interleaved runs; "
        "ratio = labkit tok/s over tokenizers tok/s in the same run; "
        "flat = time of the last 10% of tokens / first 10%; "
        "'same ids' streams the first 10% again at the end, so only the position differs"
    )
    columns = [
        "vocab", "engine", "tokens", "exact", "labkit tok/s", "tokenizers tok/s", "ratio",
        "flat labkit", "flat tokenizers", "flat labkit same ids",
    ]
    print(table(rows, columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
