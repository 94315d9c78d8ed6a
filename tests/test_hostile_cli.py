"""Hostile command lines for `labkit` (issues 14 and 17): every bad argument is one
`labkit: error:` line and exit status 2, checked before any work and leaving no file; a
closed pipe ends quietly; `--png` writes exactly the path it prints; `-` reads stdin;
`labkit bench` takes its flags in any order. Each call runs in a child process under a
memory cap and a wall-clock limit."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ADDRESS_SPACE = 2_000 * 2**20  # the interpreter, matplotlib and tokenizers map ~1 GB before any work
WALL_SECONDS = 120  # a kill switch for a hang on a loaded machine


def labkit_cli(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE}))
        from labkit.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    return subprocess.run([sys.executable, "-c", code, *argv], input=stdin, capture_output=True, text=True,
                          timeout=WALL_SECONDS, env=dict(os.environ, MPLBACKEND="Agg"))


def assert_refused(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("labkit: error:"), last
    for word in words:
        assert word in last, last


# ----------------------------------------------------------------------------- lattice --png / --dpi


@pytest.mark.parametrize("dpi", ["0", "-5", "100000", "ten"])
def test_bad_dpi_is_refused_before_any_work(tmp_path, dpi):
    target = tmp_path / "x.png"
    result = labkit_cli("lattice", "botchan-unigram", "hello", "--png", str(target), "--dpi", dpi)
    assert_refused(result, "--dpi")
    assert not target.exists()


@pytest.mark.parametrize("name,words", [
    ("x.jpg", ["must end in .png"]),
    ("x", ["must end in .png"]),
    ("missing/x.png", ["does not exist"]),
])
def test_impossible_png_paths_are_refused(tmp_path, name, words):
    result = labkit_cli("lattice", "botchan-unigram", "hello", "--png", str(tmp_path / name))
    assert_refused(result, *words)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_unwritable_png_folder_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert_refused(labkit_cli("lattice", "botchan-unigram", "hi", "--png", str(folder / "x.png")), "not writable")
    finally:
        folder.chmod(0o700)


def test_a_png_path_the_system_cannot_create_is_one_error_line(tmp_path):
    # /proc accepts no new files, even for root: the failure comes from the system call itself
    result = labkit_cli("lattice", "botchan-unigram", "hello", "--png", "/proc/labkit-test.png")
    assert_refused(result, "/proc/labkit-test.png")


def test_png_folder_writes_exactly_the_path_it_prints(tmp_path):
    result = labkit_cli("lattice", "botchan-unigram", "hello", "--png", str(tmp_path))
    assert result.returncode == 0, result.stderr
    printed = result.stdout.strip().removeprefix("wrote ")
    assert printed == str(tmp_path / "lattice.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lattice.png"]  # no temporary left behind
    assert (tmp_path / "lattice.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_file_writes_exactly_the_path_it_prints(tmp_path):
    target = tmp_path / "Lattice.PNG"
    result = labkit_cli("lattice", "botchan-unigram", "hello", "--png", str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"wrote {target}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Lattice.PNG"]


# ----------------------------------------------------------------------------- pipes, stdin


def test_a_closed_pipe_ends_quietly():
    code = textwrap.dedent("""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-m", "labkit.cli", "encode", "gpt2", "--engine", "hf", "-"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        child.stdin.write(b"hello " * 200000)  # 200,000 ids: far more than a pipe holds
        child.stdin.close()
        first = child.stdout.read(1)
        child.stdout.close()  # what `| head -c1` does
        err = child.stderr.read().decode()
        print(repr(first), child.wait(), repr(err))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WALL_SECONDS)
    first, status, err = result.stdout.strip().split(" ", 2)
    assert first == "b'3'" and status == "141" and err == "''", result.stdout


def test_dash_reads_text_and_ids_from_stdin():
    result = labkit_cli("encode", "gpt2", "-", "--engine", "hf", stdin="Hello world")
    assert result.returncode == 0 and result.stdout.split() == ["15496", "995"], result.stderr
    result = labkit_cli("decode", "gpt2", "-", "--engine", "hf", stdin="15496, 995\n")
    assert result.returncode == 0 and result.stdout == "Hello world\n", result.stderr


def test_unknown_command_and_missing_arguments_are_labkit_errors():
    assert_refused(labkit_cli("frobnicate"), "invalid choice")
    assert_refused(labkit_cli("encode", "gpt2"), "text")


# ----------------------------------------------------------------------------- bench and inspect


@pytest.mark.parametrize("order", [["wordpiece", "--quick"], ["--quick", "wordpiece"]])
def test_bench_flags_in_any_order_and_the_size_it_measured(order):
    result = labkit_cli("bench", *order, "--mb", "0.01", "--repeat", "1", "--vocab", "minilm")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "botchan 0.01 MB" in result.stdout, result.stdout  # the size it measured, not the size asked


def test_bench_help_names_the_command_it_was_called_by():
    result = labkit_cli("bench", "bpe", "--help")
    assert result.returncode == 0 and "\nusage: labkit bench bpe " in result.stdout, result.stdout
    direct = subprocess.run([sys.executable, "-m", "labkit.bench", "bpe", "--help"], capture_output=True, text=True,
                            timeout=WALL_SECONDS)
    assert "\nusage: python -m labkit.bench bpe " in direct.stdout, direct.stdout
    result = labkit_cli("bench", "nosuch")
    assert result.returncode == 2 and "choose a suite" in result.stderr and "Traceback" not in result.stderr


def test_bench_prints_no_verdicts_in_the_suites_of_this_area():
    from pathlib import Path

    import labkit.bench

    folder = Path(labkit.bench.__file__).parent
    for name in ("__init__.py", "cache.py", "serving.py", "harness.py"):
        text = (folder / name).read_text(encoding="utf-8")
        for verdict in ("MISSES", "PASSES", "target met", "FAIL"):
            assert verdict not in text, (name, verdict)


def test_inspect_shows_the_normaliser_as_it_is():
    result = labkit_cli("inspect", "qwen2")
    line = next(l for l in result.stdout.splitlines() if l.startswith("normalizer"))
    assert "nfc" in line, line  # Qwen2 NFC-normalises (data/README.md); labkit does it through its pre-tokenizer
    result = labkit_cli("inspect", "botchan-unigram")
    line = next(l for l in result.stdout.splitlines() if l.startswith("normalizer"))
    assert line.split(None, 1)[1].startswith("nfkc:") and "name" not in line and "bytes>" in line, line
