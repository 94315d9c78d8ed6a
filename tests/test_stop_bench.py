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
    assert bench_stop.main(["--tokens", "300", "--repeat", "1", "--counts", "1,3"]) == 0
    out = capsys.readouterr().out
    assert "DecodeStream (plain)" in out and "StopSequenceDecoder (jail)" in out and "fixed hold-back" in out
    assert "with 3 stop strings the stop decoder costs" in out
