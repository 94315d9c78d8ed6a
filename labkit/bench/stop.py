"""``python -m labkit.bench stop``: per-token cost of the stop decoder over a plain DecodeStream.

The same token stream (botchan.txt, encoded once) goes through a plain
``labkit.DecodeStream`` and through ``labkit.StopSequenceDecoder`` with 1, 10 and 100 stop
strings, in the same run, interleaved round by round so that machine noise hits both. The
stop strings never complete in the corpus but share long prefixes with it (" the ..."), so
the jail is busy: a hard case, not a flattering one. Reported: microseconds per token and
the ratio to the plain stream (target: under 2x with 100 stops); the time to compile a
never-seen stop set of 1 to 1,000 strings (target: 1,000 under 10 ms); a 500-token request
with a never-seen stop set over the same request warm, and over the request after 8 others
used the set (target: at most 1.5x); and that
request cycling through 1, 65 and 300 distinct stop sets, over the same requests with one
set (the compile cache's reach). The fixed hold-back approach (one ``find`` per stop string) is timed alongside for comparison. Times are CPU
time of this process (``time.process_time``), which a busy machine disturbs less than wall
time. The compiled stop set (automaton and push memo) is shared between decoders with the
same stops, as it would be between a server's requests; the warm-up round fills it.

Introduced in notebook ``09_stop_sequences_jail``.

From a shell: ``python -m labkit.bench stop --tokens 20000``
"""
from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import time
from collections import Counter

from labkit.bench.harness import corpus, table
from labkit.streaming.decode_stream import DecodeStream
from labkit.streaming.stop import (CACHE_SETS, CACHE_UNITS, FixedHoldBack, StopSequenceConfig, StopSequenceDecoder,
                                   StopStringMatcher)

# realistic stops first, then corpus-shaped ones (see stop_strings)
_COMMON_STOPS = ["\n\nUser:", "<|im_end|>", "Observation:", "</answer>", "\n\n\n\n", "###", "[/INST]", "<|eot_id|>"]


def stop_strings(count: int, text: str) -> list[str]:
    """``count`` stop strings that never occur in ``text`` but start like it often does.

    Example:
        >>> from labkit.bench.stop import stop_strings, corpus
        >>> stop_strings(3, corpus(0.1))
        ['\\n\\nUser:', '<|im_end|>', 'Observation:']
    """
    words = Counter(w for w in text.split() if w.isalpha() and len(w) >= 3)
    shaped = (f" {w} qzx" for w, _ in words.most_common())  # " the ..." jails, "qzx" never follows
    out = []
    for stop in itertools.chain(_COMMON_STOPS, shaped):
        if len(out) == count:
            break
        if stop not in text:  # checked only until enough are found (each check scans the text)
            out.append(stop)
    if len(out) < count:
        raise ValueError(f"only {len(out)} stop strings available, {count} asked")
    return out


def _time(fn) -> float:
    # CPU time of this process: on a shared machine, wall time mostly measures the neighbours
    gc.collect()
    started = time.process_time()
    fn()
    return time.process_time() - started


def _plain_run(tok, ids):
    def run():
        stream = DecodeStream(tok, skip_special_tokens=True)
        step = stream.step
        for i in ids:
            step(i)
        stream.flush()
    return run


def _stop_run(tok, ids, config):
    def run():
        dec = StopSequenceDecoder(tok, config)
        process = dec.process_token
        for i in ids:
            process(i)
        dec.flush()
        if dec.stopped:  # the benchmark would be measuring a shorter stream
            raise RuntimeError(f"benchmark stop fired: {dec.stop_reason}")
    return run


def _hold_back_run(tok, ids, stops):
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


def _matcher_run(chunks, stops):
    def run():
        matcher = StopStringMatcher(stops)
        push = matcher.push
        for chunk in chunks:
            if chunk:
                push(chunk)
        matcher.release()
    return run


def _interleaved(functions, repeat: int) -> list[list[float]]:
    """CPU times of each function, ``repeat`` rounds, every function once per round."""
    for fn in functions:  # warm up caches (and check that no stop fires)
        fn()
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeat):  # interleaved rounds: noise hits every variant alike
        for index, fn in enumerate(functions):
            times[index].append(_time(fn))
    return times


def measure(tok, ids: list[int], counts=(1, 10, 100), *, repeat: int = 5, text: str | None = None,
            hold_back: bool = True) -> list[dict]:
    """Time the plain stream and the stop decoder for each stop count; one row per variant.

    Rows: ``variant``, ``stops``, ``us_per_token``, ``overhead_us`` (per token, over the plain
    stream) and ``ratio`` (to the plain stream, per round, then the median). "its matcher alone" rows time the
    jail on the pre-decoded chunks: the overhead itself, less exposed to noise.

    Example (timings vary, so only the rows are shown):
        >>> import labkit
        >>> tok = labkit.load("gpt2", engine="labkit")
        >>> rows = measure(tok, tok.encode("It was a fine day. The school was quiet. " * 5).ids, (1,), repeat=1)
        >>> [(row["variant"], row["stops"]) for row in rows]
        [('DecodeStream (plain)', 0), ('StopSequenceDecoder (jail)', 1), ('  its matcher alone', 1), ('fixed hold-back + find', 1)]
    """
    text = text if text is not None else tok.decode(ids)
    stream = DecodeStream(tok, skip_special_tokens=True)
    chunks = [stream.step(i) for i in ids]
    variants = [("DecodeStream (plain)", 0, _plain_run(tok, ids))]
    for k in counts:
        stops = stop_strings(k, text)
        variants.append(("StopSequenceDecoder (jail)", k, _stop_run(tok, ids, StopSequenceConfig(stop_sequences=stops))))
        variants.append(("  its matcher alone", k, _matcher_run(chunks, stops)))
        if hold_back:
            variants.append(("fixed hold-back + find", k, _hold_back_run(tok, ids, stops)))
    times = _interleaved([fn for _, _, fn in variants], repeat)
    rows = []
    for index, (name, k, _) in enumerate(variants):
        t = statistics.median(times[index])
        # the ratio is taken round by round (same moment, same load), then the median
        ratio = statistics.median(a / b for a, b in zip(times[index], times[0]))
        extra = t if name.startswith("  ") else t - statistics.median(times[0])
        rows.append({"variant": name, "stops": k, "us_per_token": t / len(ids) * 1e6,
                     "overhead_us": extra / len(ids) * 1e6, "ratio": ratio})
    return rows


def fresh_stops(stops: list[str], tag: str) -> list[str]:
    """``stops`` with the last string made unique by ``tag``: a stop set never compiled before.

    Example:
        >>> from labkit.bench.stop import fresh_stops
        >>> fresh_stops(["\\n\\nUser:", "<|im_end|>"], "r1")
        ['\\n\\nUser:', '<|im_end|>#r1']
    """
    return stops[:-1] + [f"{stops[-1]}#{tag}"]


def measure_compile(counts, text: str, *, repeat: int = 5) -> list[dict]:
    """Milliseconds (CPU) to compile a never-seen stop set of each size: median of ``repeat``.

    Example:
        >>> rows = measure_compile((1, 10), "It was a fine day. The school was quiet. " * 5, repeat=1)
        >>> [(row["stops"], row["compile_ms"] > 0) for row in rows]
        [(1, True), (10, True)]
    """
    from labkit.streaming.stop import _compile

    base = stop_strings(max(counts), text)
    rows = []
    for k in counts:
        times = []
        for round_ in range(repeat):
            stops = tuple(fresh_stops(base[:k], f"compile{round_}"))
            times.append(_time(lambda: _compile(stops, ())))
        rows.append({"stops": k, "compile_ms": statistics.median(times) * 1e3})
    return rows


def measure_first_request(tok, ids: list[int], counts, *, repeat: int = 5, text: str | None = None,
                          others: list[list[int]] = ()) -> list[dict]:
    """A request (``ids`` through a new StopSequenceDecoder) with a never-seen stop set, then warm.

    Per round and stop count: the first request with a fresh stop set (compiled during the
    request); the same request again (``warm_ms``: compiled, and every push of this very
    request remembered); and, when ``others`` (other requests' ids) are given, the request
    with a second fresh set that those other requests used first (``warm_other_ms``: what a
    server's next request with a known set costs, its own new pushes worked out). Ratios are
    taken per round, then the median. Rows: ``stops``, ``first_ms``, ``warm_ms``,
    ``first_over_warm``, and with ``others`` ``warm_other_ms`` and ``first_over_warm_other``.

    Example:
        >>> import labkit
        >>> tok = labkit.load("gpt2", engine="labkit")
        >>> ids = tok.encode("It was a fine day. The school was quiet. " * 5).ids
        >>> [sorted(row) for row in measure_first_request(tok, ids, (1,), repeat=1, others=[ids[:9]])]
        [['first_ms', 'first_over_warm', 'first_over_warm_other', 'stops', 'warm_ms', 'warm_other_ms']]
    """
    text = text if text is not None else tok.decode(ids)
    base = stop_strings(max(counts), text)
    _plain_run(tok, ids)()  # the stream's own memos are warm in both cases
    for other in others:
        _plain_run(tok, other)()
    rows = []
    for k in counts:
        firsts, warms, warm_others = [], [], []
        for round_ in range(repeat):
            run = _stop_run(tok, ids, StopSequenceConfig(stop_sequences=fresh_stops(base[:k], f"first{round_}")))
            firsts.append(_time(run))
            warms.append(_time(run))
            if others:
                config = StopSequenceConfig(stop_sequences=fresh_stops(base[:k], f"other{round_}"))
                for other in others:  # earlier requests with this set, untimed
                    _stop_run(tok, other, config)()
                warm_others.append(_time(_stop_run(tok, ids, config)))
        row = {"stops": k, "first_ms": statistics.median(firsts) * 1e3, "warm_ms": statistics.median(warms) * 1e3,
               "first_over_warm": statistics.median(a / b for a, b in zip(firsts, warms))}
        if others:
            row["warm_other_ms"] = statistics.median(warm_others) * 1e3
            row["first_over_warm_other"] = statistics.median(a / b for a, b in zip(firsts, warm_others))
        rows.append(row)
    return rows


def measure_rotation(tok, ids: list[int], rotations, *, stops: int = 10, repeat: int = 5,
                     text: str | None = None) -> list[dict]:
    """Requests cycling through ``n`` distinct stop sets, next to the same requests with one set.

    Per rotation size ``n``: ``n`` never-seen stop sets of ``stops`` strings; after one warm
    pass, each round times one request with each set in turn and then ``n`` requests with the
    first set alone (interleaved, same load). A rotation wider than the compile cache
    (``CACHE_SETS`` sets, ``CACHE_UNITS`` remembered items) compiles every set again each time round.
    Rows: ``stops``, ``sets``, ``rotation_ms`` and ``one_set_ms`` per request, ``rotation_over_one``.

    Example:
        >>> import labkit
        >>> tok = labkit.load("gpt2", engine="labkit")
        >>> rows = measure_rotation(tok, tok.encode("It was a fine day. The school was quiet. " * 5).ids, (1, 3), repeat=1)
        >>> [(row["stops"], row["sets"]) for row in rows]
        [(10, 1), (10, 3)]
    """
    text = text if text is not None else tok.decode(ids)
    base = stop_strings(stops, text)
    _plain_run(tok, ids)()
    rows = []
    for n in rotations:
        runs = [_stop_run(tok, ids, StopSequenceConfig(stop_sequences=fresh_stops(base, f"rotation{n}-{j}")))
                for j in range(n)]

        def rotation():
            for run in runs:
                run()

        def one_set():
            for _ in range(n):
                runs[0]()

        rotation_times, one_times = _interleaved([rotation, one_set], repeat)
        rows.append({"stops": stops, "sets": n, "rotation_ms": statistics.median(rotation_times) / n * 1e3,
                     "one_set_ms": statistics.median(one_times) / n * 1e3,
                     "rotation_over_one": statistics.median(a / b for a, b in zip(rotation_times, one_times))})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the suite and print the tables (exit status 0).

    From a shell: ``python -m labkit.bench stop --tokens 5000`` (a full run encodes 0.3 MB first).
    """
    import labkit

    parser = argparse.ArgumentParser(prog="python -m labkit.bench stop", description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", default="gpt2", help="bundled name or path (default gpt2)")
    parser.add_argument("--engine", default=None, help="engine to decode with (default: load()'s choice)")
    parser.add_argument("--tokens", type=int, default=20000, help="length of the token stream")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--counts", default="1,10,100", help="stop-string counts, comma separated")
    parser.add_argument("--request-tokens", type=int, default=500, help="tokens in one request (first vs warm)")
    parser.add_argument("--compile-counts", default="1,10,100,1000", help="stop-set sizes for compile and first request")
    parser.add_argument("--rotations", default="1,65,300", help="distinct stop sets a server cycles through")
    parser.add_argument("--rotation-stops", default="10,1000", help="strings per stop set in the rotation")
    args = parser.parse_args(argv)
    tok = labkit.load(args.vocab, engine=args.engine)
    text = corpus(0.3)
    ids = tok.encode(text).ids[: args.tokens]
    counts = tuple(int(c) for c in args.counts.split(","))
    rows = measure(tok, ids, counts, repeat=args.repeat, text=tok.decode(ids))
    print(f"vocab {args.vocab} (engine {tok.engine}), {len(ids)} tokens, median of {args.repeat} interleaved rounds, CPU time")
    print(table(rows, ["variant", "stops", "us_per_token", "overhead_us", "ratio"]))
    jail = {r["stops"]: r for r in rows if r["variant"].startswith("StopSequenceDecoder")}
    alone = {r["stops"]: r for r in rows if r["variant"].startswith("  its matcher")}
    worst = max(jail)
    base = rows[0]["us_per_token"]
    print(f"with {worst} stop strings the stop decoder costs {jail[worst]['ratio']:.2f}x the plain stream "
          f"in the same run; its matcher alone adds {alone[worst]['us_per_token']:.2f} us/token "
          f"= {alone[worst]['us_per_token'] / base:.2f}x of the plain stream's {base:.1f} us/token")
    sizes = tuple(int(c) for c in args.compile_counts.split(","))
    print(f"\ncompiling a never-seen stop set (CPU time, median of {args.repeat})")
    print(table(measure_compile(sizes, text, repeat=args.repeat), ["stops", "compile_ms"]))
    request = ids[: args.request_tokens]
    # up to 8 other requests of the same length: what used a known stop set before this request
    size = max(1, len(request))
    others = [ids[start : start + size] for start in range(size, len(ids) - size + 1, size)][:8]
    first = measure_first_request(tok, request, sizes, repeat=args.repeat, text=text, others=others)
    print(f"\na request of {len(request)} tokens with a never-seen stop set; then warm: the same request again "
          f"(every push remembered), and the request with a set that {len(others)} other requests used first "
          f"(CPU time, median of {args.repeat}; ratios taken per round, then the median)")
    columns = ["stops", "first_ms", "warm_ms", "first_over_warm"]
    if others:
        columns += ["warm_other_ms", "first_over_warm_other"]
    print(table(first, columns))
    rotations = tuple(int(c) for c in args.rotations.split(","))
    rotated = [row for k in args.rotation_stops.split(",")
               for row in measure_rotation(tok, request, rotations, stops=int(k), repeat=args.repeat, text=text)]
    print(f"\nthe same {len(request)}-token request cycling through distinct stop sets, next to one set "
          f"(CPU time, median of {args.repeat} interleaved rounds; the compile cache keeps {CACHE_SETS} sets, "
          f"{CACHE_UNITS:,} remembered items)")
    print(table(rotated, ["stops", "sets", "rotation_ms", "one_set_ms", "rotation_over_one"]))
    return 0
