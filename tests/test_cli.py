"""The `labkit` command, called in-process and once as an installed script."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import labkit
from labkit.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_encode_prints_the_same_ids_as_the_library(capsys):
    code, out, _ = run(capsys, "encode", "gpt2", "Hello world", "--engine", "hf")
    assert code == 0 and out.split() == [str(i) for i in labkit.load("gpt2", engine="hf").encode("Hello world").ids]


def test_encode_json_and_decode_round_trip(capsys):
    code, out, _ = run(capsys, "encode", "qwen2", "héllo <|im_end|>", "--json")
    data = json.loads(out)
    assert code == 0 and 151645 in data["ids"] and len(data["tokens"]) == len(data["offsets"])
    code, out, _ = run(capsys, "decode", "qwen2", *map(str, data["ids"]))
    assert out == "héllo <|im_end|>\n"


def test_inspect_reports_format_model_and_template(capsys):
    code, out, _ = run(capsys, "inspect", "qwen2", "--json")
    info = json.loads(out)
    assert code == 0
    assert (info["format"], info["model"], info["pre"], info["vocab_size"], info["chat_template"]) == (
        "gguf", "bpe_byte", "qwen2", 151936, True)


def test_errors_are_one_line_and_exit_2(capsys):
    code, _, err = run(capsys, "decode", "gpt2", "99999999")
    assert code == 2 and "unknown id 99999999" in err and "Traceback" not in err
    code, _, err = run(capsys, "inspect", "/no/such/file.gguf")
    assert code == 2 and "labkit: error:" in err


@pytest.mark.parametrize("command", ["encode", "decode", "inspect", "lattice", "bench"])
def test_every_subcommand_has_help(capsys, command):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0 and "usage: labkit " + command in capsys.readouterr().out


def test_installed_script_runs():
    script = shutil.which("labkit") or str(__import__("pathlib").Path(sys.executable).with_name("labkit"))
    result = subprocess.run([script, "encode", "gpt2", "Hello world", "--engine", "hf"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.split() == ["15496", "995"]


def test_lattice_writes_a_png(capsys, tmp_path):
    out = tmp_path / "lattice.png"
    code, stdout, _ = run(capsys, "lattice", "botchan-unigram", "What is LoRA?", "--png", str(out))
    assert code == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_lattice_of_a_model_without_one_is_a_clear_error(capsys, tmp_path):
    code, _, err = run(capsys, "lattice", "gpt2", "hi", "--png", str(tmp_path / "x.png"))
    assert code == 2 and "labkit: error:" in err and not (tmp_path / "x.png").exists()
