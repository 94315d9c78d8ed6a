"""Hostile streams and stop sets (issue 14): each probe runs in a child process under a memory
cap and a wall-clock limit, and must end in a LabkitError or a correct result within 2 s of
CPU time and 500 MB of memory (both measured in the child, around the probe only)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

# CPU time of the probe itself: a bound on a runaway (work done before its limit is checked
# runs for minutes), not a timing assertion; the probes take well under a second
SECONDS = 10.0
MEGABYTES = 500  # growth of the child's peak resident memory during the probe
WALL_LIMIT = 120  # the whole child, imports included, on a loaded 2-core machine

PRELUDE = """
import json, resource, time
import labkit
from labkit.core import LabkitError
from labkit.streaming.decode_stream import DecodeStream
from labkit.streaming.stop import StopSequenceConfig, StopSequenceDecoder, StopStringMatcher
from labkit.streaming.utf8 import byte_token_ids

def _vm_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()

def probe(fn):
    # the cap: what is mapped now plus the probe's allowance (a runaway dies with MemoryError)
    cap = _vm_bytes() + {megabytes} * 2**20 + 256 * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    try:
        result, error = fn(), None
    except LabkitError as exc:
        result, error = None, str(exc)[:300]
    seconds = time.process_time() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
    print(json.dumps({{"result": result, "error": error, "seconds": seconds, "megabytes": grown}}))
"""


def run_probe(setup: str, body: str) -> dict:
    """Run ``setup`` (not measured) then ``probe(fn)`` on the function defined in ``body``."""
    code = PRELUDE.format(megabytes=MEGABYTES) + textwrap.dedent(setup) + textwrap.dedent(body) + "\nprobe(fn)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WALL_LIMIT,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["seconds"] < SECONDS, report
    assert report["megabytes"] < MEGABYTES, report
    return report


# "hf": tokenizers' reading of llama-spm (engine="hf" refuses the file), a decoder that renders a run all or nothing
LLAMA = """
from labkit.engines.hf import convert_model_file
engine = {engine!r}
tok = convert_model_file("llama-spm") if engine == "hf" else labkit.load("llama-spm", engine=engine)
byte = byte_token_ids(tok)
"""


@pytest.mark.parametrize("engine", ["labkit", "hf", "sentencepiece"])
def test_8000_orphan_bytes_stream_in_a_bounded_window(engine):
    report = run_probe(LLAMA.format(engine=engine) + "ids = [byte[0x80]] * 8000\nwant = tok.decode(ids)\n", """
        def fn():
            stream = DecodeStream(tok)
            out = "".join(stream.step_batch(ids)) + (stream.flush() or "")
            return {"same": out == want, "window": stream.max_window}
    """)
    assert report["error"] is None and report["result"]["same"], report
    assert report["result"]["window"] <= 70, report


@pytest.mark.parametrize("engine", ["labkit", "hf", "sentencepiece"])
def test_1500_cjk_characters_as_byte_pieces_come_out_before_the_flush(engine):
    setup = LLAMA.format(engine=engine) + 'ids = [byte[b] for b in ("中文字" * 500).encode()]\nwant = tok.decode(ids)\n'
    report = run_probe(setup, """
        def fn():
            stream = DecodeStream(tok)
            chunks = [stream.step(i) for i in ids]
            first = next(k for k, chunk in enumerate(chunks) if chunk)
            out = "".join(c for c in chunks if c) + (stream.flush() or "")
            return {"same": out == want, "window": stream.max_window, "first": first}
    """)
    result = report["result"]
    assert report["error"] is None and result["same"], report
    assert result["first"] <= 70 and result["window"] <= 70, report


@pytest.mark.parametrize("engine", ["labkit", "hf"])
def test_the_stop_decoder_over_8000_orphan_bytes(engine):
    setup = LLAMA.format(engine=engine) + "ids = [byte[0x80]] * 8000\nwant = tok.decode(ids)\n"
    report = run_probe(setup, """
        def fn():
            dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=["\\n\\nUser:"]))
            outs = dec.process_tokens(ids) + [dec.flush()]
            return {"same": "".join(getattr(o, "text", "") for o in outs) == want}
    """)
    assert report["error"] is None and report["result"]["same"], report


def test_10000_stop_strings_of_10_characters():
    setup = """
        import random, string
        rng = random.Random(7)
        stops = ["".join(rng.choice(string.ascii_lowercase) for _ in range(10)) for _ in range(10_000)]
        text = "x" * 50 + stops[1234] + "tail"
    """
    report = run_probe(setup, """
        def fn():
            matcher = StopStringMatcher(stops)
            released = [matcher.push(text[i:i + 3]) for i in range(0, len(text), 3)]
            return {"shown": "".join(r for r, _ in released), "fired": matcher.stopped.value == stops[1234]}
    """)
    assert report["error"] is None, report
    assert report["result"] == {"shown": "x" * 50, "fired": True}


def test_one_stop_string_of_80000_characters_followed_almost_to_the_end():
    setup = 'stop = "ab" * 40_000\n'
    report = run_probe(setup, """
        def fn():
            matcher = StopStringMatcher([stop])
            shown = [matcher.push(ch)[0] for ch in stop[:-1]]  # the jail grows to 79,999 chars
            held = matcher.jail_length
            shown.append(matcher.push("x")[0])  # ... and is released at once
            return {"held": held, "shown": len("".join(shown))}
    """)
    assert report["error"] is None, report
    assert report["result"] == {"held": 79_999, "shown": 80_000}


def test_stop_strings_past_the_cap_are_refused_before_any_work():
    from labkit.algorithms.aho_corasick import MAX_PATTERN_CHARS

    setup = f'stops = ["a" * 1000 + str(i) for i in range({MAX_PATTERN_CHARS // 1000 + 1})]\n'
    report = run_probe(setup, """
        def fn():
            StopSequenceDecoder(labkit.load("gpt2"), StopSequenceConfig(stop_sequences=stops))
    """)
    assert report["error"] is not None and "limit" in report["error"], report


def test_the_compile_cache_lets_a_large_stop_set_go():
    report = run_probe('stop = "ab" * 40_000\n', """
        def fn():
            import gc
            from labkit.streaming import stop as stop_module
            dec = StopSequenceDecoder(labkit.load("gpt2"), StopSequenceConfig(stop_sequences=[stop]))
            alive_with = len(stop_module._LIVE)
            del dec
            gc.collect()
            cached = sum(t.size for t in stop_module._CACHE.values())
            return {"alive_with": alive_with, "alive_after": len(stop_module._LIVE), "cached_chars": cached}
    """)
    assert report["result"] == {"alive_with": 1, "alive_after": 0, "cached_chars": 0}, report


@pytest.mark.parametrize("bad", [-1, 1.5, "7", None, 10**9])
def test_after_a_stop_a_bad_id_still_raises(bad):
    import labkit
    from labkit.streaming.stop import StopSequenceConfig, StopSequenceDecoder, Stopped

    tok = labkit.load("gpt2")
    dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=["world"]))
    outs = dec.process_tokens(tok.encode("Hello world again").ids)
    assert dec.stopped and outs[-1] == Stopped()
    with pytest.raises(labkit.LabkitError):
        dec.process_token(bad)
    assert dec.process_token(tok.encode("x").ids[0]) == Stopped()  # a good id after a stop: still Stopped
