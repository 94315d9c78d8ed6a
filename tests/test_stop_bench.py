"""The stop benchmark suite runs and reports every variant (no timing is asserted)."""
from __future__ import annotations

from labkit.bench import stop as bench_stop
from labkit.bench.harness import corpus


def test_stop_strings_never_occur_and_are_distinct():
    text = corpus(0.05)
    stops = bench_stop.stop_strings(100, text)
    assert len(set(stops)) == 100 and not any(s in text for s in stops)
    assert bench_stop.stop_strings(10, text) == stops[:10]


def test_bench_main_prints_every_row(capsys):
    assert bench_stop.main(["--tokens", "300", "--repeat", "1", "--counts", "1,3", "--compile-counts", "1,5",
                            "--rotations", "1,3", "--rotation-stops", "2"]) == 0
    out = capsys.readouterr().out
    assert "DecodeStream (plain)" in out and "StopSequenceDecoder (jail)" in out and "fixed hold-back" in out
    assert "with 3 stop strings the stop decoder costs" in out


def test_bench_reports_compile_time_and_first_request_ratio(capsys):
    assert bench_stop.main(["--tokens", "300", "--repeat", "1", "--counts", "1", "--request-tokens", "50",
                            "--compile-counts", "1,20", "--rotations", "1,4", "--rotation-stops", "3"]) == 0
    out = capsys.readouterr().out
    assert "compile_ms" in out and "first_over_warm" in out and "rotation_over_one" in out
    assert "first_over_warm_other" in out and "5 other requests used first" in out  # 300 tokens: 5 more of 50
    assert "MISSES" not in out and "meets" not in out  # ratios, no verdict strings


def test_fresh_stops_are_never_compiled_before():
    stops = bench_stop.stop_strings(3, corpus(0.05))
    assert bench_stop.fresh_stops(stops, "a") != bench_stop.fresh_stops(stops, "b")
    assert bench_stop.fresh_stops(stops, "a")[:2] == stops[:2]


def test_stop_and_stream_suites_print_ratios_not_verdicts(capsys):
    from pathlib import Path

    from labkit.bench import stream as bench_stream

    folder = Path(bench_stop.__file__).parent
    for name in ("stop.py", "stream.py"):
        source = (folder / name).read_text(encoding="utf-8")
        for verdict in ("target met", "MISSES", "PASSES", "FAIL"):
            assert verdict not in source, (name, verdict)
    assert bench_stream.main(["--tokens", "400", "--repeat", "1", "--vocab", "gpt2"]) == 0
    out = capsys.readouterr().out
    assert "CPU time" in out and "ratio" in out and "yes" not in out.split("\n", 1)[1], out


def test_stream_suite_runs_its_default_vocabularies_and_skips_what_the_engine_refuses(capsys):
    """`bench all` runs the stream suite with its defaults: each must load with the hf engine;
    a vocabulary the engine refuses is named and skipped, not a traceback."""
    from labkit.bench import stream as bench_stream

    assert bench_stream.main(["--tokens", "300", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "skipped" not in out and all(name in out for name in bench_stream.DEFAULT_VOCABS), out
    assert bench_stream.main(["--tokens", "300", "--repeat", "1", "--vocab", "llama-spm"]) == 0
    assert "llama-spm: skipped: " in capsys.readouterr().out
