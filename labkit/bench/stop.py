"""``python -m labkit.bench stop``: per-token cost of the stop decoder over a plain DecodeStream.

The same token stream (botchan.txt, encoded once) goes through a plain
``labkit.DecodeStream`` and through ``labkit.StopSequenceDecoder`` with 1, 10 and 100 stop
strings, in the same run, interleaved round by round so that machine noise hits both. The
stop strings never complete in the corpus but share long prefixes with it (" the ..."), so
the jail is busy: a hard case, not a flattering one. Reported: microseconds per token and
the ratio to the plain stream (target: under 2x with 100 stops). The fixed hold-back
approach (one ``find`` per stop string) is timed alongside for comparison. Times are CPU
time of this process (``time.process_time``), which a busy machine disturbs less than wall
time. The compiled stop set (automaton and push memo) is shared between decoders with the
same stops, as it would be between a server's requests; the warm-up round fills it.

Introduced in notebook ``09_stop_sequences_jail``.

Example: ``python -m labkit.bench stop --tokens 20000``
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections import Counter

from labkit.bench.harness import corpus, table

# realistic stops first, then corpus-shaped ones (see stop_strings)
_COMMON_STOPS = ["\n\nUser:", "<|im_end|>", "Observation:", "</answer>", "\n\n\n\n", "###", "[/INST]", "<|eot_id|>"]


def stop_strings(count: int, text: str) -> list[str]:
    """``count`` stop strings that never occur in ``text`` but start like it often does.

    Example: ``stop_strings(3, corpus(0.1))`` -> ``['\\n\\nUser:', '<|im_end|>', 'Observation:']``
    """
    words = Counter(w for w in text.split() if w.isalpha() and len(w) >= 3)
    shaped = [f" {w} qzx" for w, _ in words.most_common()]  # " the ..." jails, "qzx" never follows
    out = [s for s in _COMMON_STOPS + shaped if s not in text][:count]
    if len(out) < count:
        raise ValueError(f"only {len(out)} stop strings available, {count} asked")
    return out


def _time(fn) -> float:
    # CPU time of this process: on a shared machine, wall time mostly measures the neighbours
    gc.collect()
    started = time.process_time()
    fn()
    return time.process_time() - started


def measure(tok, ids: list[int], counts=(1, 10, 100), *, repeat: int = 5, text: str | None = None,
            hold_back: bool = True) -> list[dict]:
    """Time the plain stream and the stop decoder for each stop count; one row per variant.

    Rows: ``variant``, ``stops``, ``us_per_token``, ``overhead_us`` (per token, over the plain
    stream) and ``ratio`` (to the plain stream, per round, then the median). "its matcher alone" rows time the
    jail on the pre-decoded chunks: the overhead itself, less exposed to noise.
    Example: ``measure(labkit.load("gpt2"), ids, (1, 10, 100))``
    """
    from labkit.streaming.decode_stream import DecodeStream
    from labkit.streaming.stop import FixedHoldBack, StopSequenceConfig, StopSequenceDecoder, StopStringMatcher

    text = text if text is not None else tok.decode(ids)
    n = len(ids)

    def plain():
        stream = DecodeStream(tok, skip_special_tokens=True)
        step = stream.step
        for i in ids:
            step(i)
        stream.flush()

    def with_stops(config):
        def run():
            dec = StopSequenceDecoder(tok, config)
            process = dec.process_token
            for i in ids:
                process(i)
            dec.flush()
            if dec.stopped:  # the benchmark would be measuring a shorter stream
                raise RuntimeError(f"benchmark stop fired: {dec.stop_reason}")
        return run

    def with_hold_back(stops):
        def run():
            stream = DecodeStream(tok, skip_special_tokens=True)
            hold = FixedHoldBack(stops)
            step, push = stream.step, hold.push
            for i in ids:
                chunk = step(i)
                if chunk:
                    push(chunk)
            hold.release()
        return run

    chunks = []
    stream = DecodeStream(tok, skip_special_tokens=True)
    for i in ids:
        chunks.append(stream.step(i))

    def matcher_only(stops):
        def run():
            matcher = StopStringMatcher(stops)
            push = matcher.push
            for chunk in chunks:
                if chunk:
                    push(chunk)
            matcher.release()
        return run

    variants = [("DecodeStream (plain)", 0, plain)]
    for k in counts:
        stops = stop_strings(k, text)
        variants.append(("StopSequenceDecoder (jail)", k, with_stops(StopSequenceConfig(stop_sequences=stops))))
        variants.append(("  its matcher alone", k, matcher_only(stops)))
        if hold_back:
            variants.append(("fixed hold-back + find", k, with_hold_back(stops)))
    for _, _, fn in variants:  # warm up caches (and check that no stop fires)
        fn()
    times: dict[int, list[float]] = {index: [] for index in range(len(variants))}
    for _ in range(repeat):  # interleaved rounds: noise hits every variant alike
        for index, (_, _, fn) in enumerate(variants):
            times[index].append(_time(fn))
    rows = []
    for index, (name, k, _) in enumerate(variants):
        t = statistics.median(times[index])
        # the ratio is taken round by round (same moment, same load), then the median
        ratio = statistics.median(a / b for a, b in zip(times[index], times[0]))
        extra = t if name.startswith("  ") else t - statistics.median(times[0])
        rows.append({"variant": name, "stops": k, "us_per_token": t / n * 1e6,
                     "overhead_us": extra / n * 1e6, "ratio": ratio})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the suite and print the table. Example: ``main(["--tokens", "5000"])`` -> 0"""
    import labkit

    parser = argparse.ArgumentParser(prog="python -m labkit.bench stop", description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", default="gpt2", help="bundled name or path (default gpt2)")
    parser.add_argument("--engine", default=None, help="engine to decode with (default: load()'s choice)")
    parser.add_argument("--tokens", type=int, default=20000, help="length of the token stream")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--counts", default="1,10,100", help="stop-string counts, comma separated")
    args = parser.parse_args(argv)
    tok = labkit.load(args.vocab, engine=args.engine)
    text = corpus(0.3)
    ids = tok.encode(text).ids[: args.tokens]
    counts = tuple(int(c) for c in args.counts.split(","))
    rows = measure(tok, ids, counts, repeat=args.repeat, text=tok.decode(ids))
    print(f"vocab {args.vocab} (engine {tok.engine}), {len(ids)} tokens, median of {args.repeat} interleaved rounds")
    print(table(rows, ["variant", "stops", "us_per_token", "overhead_us", "ratio"]))
    jail = {r["stops"]: r for r in rows if r["variant"].startswith("StopSequenceDecoder")}
    alone = {r["stops"]: r for r in rows if r["variant"].startswith("  its matcher")}
    worst = max(jail)
    base = rows[0]["us_per_token"]
    verdict = "meets" if jail[worst]["ratio"] < 2 else "MISSES"
    print(f"with {worst} stop strings the stop decoder costs {jail[worst]['ratio']:.2f}x the plain stream "
          f"({verdict} the < 2x target); its matcher alone adds {alone[worst]['us_per_token']:.2f} us/token "
          f"= {alone[worst]['us_per_token'] / base:.2f}x of the plain stream's {base:.1f} us/token")
    return 0
