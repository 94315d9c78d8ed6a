"""Hostile tokenizer files (issue 14, readers): each reproduction runs in a child process
under a 500 MB address-space cap and must end in a LabkitError (or a correct load) within
2 s, refused before the work it guards: sizes before reading, regular files before opening,
GGUF arrays labkit does not use stepped over instead of built."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import pytest

import labkit
from labkit.algorithms.bytes_unicode import bytes_to_unicode

MEMORY_CAP = 500 * 2**20
# CPU time of the probe itself: a bound on a runaway (work done before its limit is checked
# runs for minutes), not a timing assertion; the probes take well under a second
SECONDS = 10.0
CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
    import labkit
    # the readers' own imports (gguf pulls in numpy) are start-up, not the probe
    import labkit.formats.detect, labkit.formats.gguf, labkit.formats.spm_model, labkit.formats.hf_json
    path = sys.argv[1]
    started = time.perf_counter()
    try:
        tok = labkit.load(path)
        outcome = {{"outcome": "ok", "result": [tok.vocab.model, len(tok.vocab.tokens)]}}
    except labkit.LabkitError as exc:
        outcome = {{"outcome": "LabkitError", "message": str(exc)[:300]}}
    except BaseException as exc:
        outcome = {{"outcome": "escaped", "type": type(exc).__name__, "message": str(exc)[:300]}}
    outcome["seconds"] = time.perf_counter() - started
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking pytest worker
    outcome["max_rss_mb"] = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
    print(json.dumps(outcome))
""").format(cap=MEMORY_CAP)


def load_capped(path) -> dict:
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {path} still running after 30 s")
    assert done.returncode == 0, f"child died ({done.returncode}): {done.stderr[-500:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_refused(outcome: dict, *fragments: str) -> None:
    assert outcome["outcome"] == "LabkitError", outcome
    assert "MemoryError" not in outcome["message"], outcome
    for fragment in fragments:
        assert fragment in outcome["message"], outcome
    assert outcome["seconds"] < SECONDS, outcome


# ----------------------------------------------------------------------------- size and kind


@pytest.mark.parametrize("name,head", [
    ("tokenizer.json", b'{"model": {"vocab": {'), ("big.model", b"\x0a\x05\x0a\x01a"),
    ("big.tiktoken", b"YQ== 0\n"), ("vocab.txt", b"[PAD]\n"), ("vocab.json", b'{"a": 0'),
])
def test_a_2gb_file_is_refused_before_it_is_read(tmp_path, name, head):
    path = tmp_path / name
    with open(path, "wb") as handle:  # sparse: 2 GB on paper, a few bytes on disk
        handle.write(head)
        handle.truncate(2 * 2**30)
    if name == "vocab.json":
        (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    assert_refused(load_capped(path), "bytes")


@pytest.mark.parametrize("name,size,limit", [("big.model", 70, "67,108,864"), ("big.tiktoken", 70, "67,108,864"),
                                             ("vocab.txt", 40, "33,554,432"), ("tokenizer.json", 130, "134,217,728")])
def test_each_format_has_its_own_size_limit(tmp_path, name, size, limit):
    # the limit of the file's kind (by its name), checked before a byte is read
    path = tmp_path / name
    with open(path, "wb") as handle:
        handle.truncate(size * 2**20)
    assert_refused(load_capped(path), "bytes", limit)


@pytest.mark.parametrize("name", ["merges.txt", "tokenizer_config.json"])
def test_a_2gb_companion_file_is_refused_before_it_is_read(tmp_path, name):
    from labkit.algorithms.bytes_unicode import bytes_to_unicode as table

    (tmp_path / "vocab.json").write_text(json.dumps({ch: i for i, ch in enumerate(table().values())}), encoding="utf-8")
    if name != "merges.txt":
        (tmp_path / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    with open(tmp_path / name, "wb") as handle:
        handle.write(b"#version: 0.2\n" if name == "merges.txt" else b'{"a": "')
        handle.truncate(2 * 2**30)
    assert_refused(load_capped(tmp_path), "bytes", name)


@pytest.mark.parametrize("name", ["tokenizer_config.json", "chat_template.json"])
def test_a_fifo_companion_file_is_refused_not_skipped(tmp_path, name):
    from labkit.paths import data_path

    (tmp_path / "tokenizer.json").write_bytes(data_path("hf/all-MiniLM-L6-v2/tokenizer.json").read_bytes())
    os.mkfifo(tmp_path / name)
    for target in (tmp_path, tmp_path / "tokenizer.json"):
        assert_refused(load_capped(target), name, "not a regular file")


def test_a_fifo_is_refused(tmp_path):
    path = tmp_path / "pipe.model"
    os.mkfifo(path)
    assert_refused(load_capped(path), "not a regular file")


def test_a_link_to_dev_zero_is_refused(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.symlink_to("/dev/zero")
    assert_refused(load_capped(path), "not a regular file")


# ----------------------------------------------------------------------------- GGUF


def _gguf_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def write_gguf(path, pairs: list[tuple[str, int, bytes]]) -> None:
    """A GGUF v3 header from (key, value type, encoded value) triples, written by hand."""
    with open(path, "wb") as handle:
        handle.write(b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)))
        for key, vtype, value in pairs:
            handle.write(_gguf_string(key) + struct.pack("<I", vtype) + value)


def _string_array(items) -> bytes:
    return struct.pack("<IQ", 8, len(items)) + b"".join(_gguf_string(s) for s in items)


def byte_level_pairs(merges=("Ġ t",), extra_tokens=("Ġt",)) -> list:
    tokens = [bytes_to_unicode()[b] for b in range(256)] + list(extra_tokens)
    return [
        ("tokenizer.ggml.model", 8, _gguf_string("gpt2")),
        ("tokenizer.ggml.pre", 8, _gguf_string("gpt-2")),
        ("tokenizer.ggml.tokens", 9, _string_array(tokens)),
        ("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, len(tokens)) + struct.pack(f"<{len(tokens)}i", *[1] * len(tokens))),
        ("tokenizer.ggml.merges", 9, _string_array(list(merges))),
    ]


def test_an_unused_100mb_gguf_array_is_stepped_over(tmp_path):
    path = tmp_path / "big.gguf"
    blob = ("general.blob", 9, struct.pack("<IQ", 0, 100 * 2**20) + bytes(100 * 2**20))  # u8 x 100M
    write_gguf(path, [blob, *byte_level_pairs()])
    outcome = load_capped(path)
    assert outcome["outcome"] == "ok" and outcome["result"] == ["bpe_byte", 257], outcome
    assert outcome["seconds"] < SECONDS, outcome


def test_a_2gb_model_gguf_loads_its_header_only(tmp_path):
    # a model GGUF is gigabytes of tensors after a small header: the reader maps a bounded window
    path = tmp_path / "model.gguf"
    write_gguf(path, byte_level_pairs())
    with open(path, "r+b") as handle:
        handle.truncate(2 * 2**30)  # sparse tensors
    outcome = load_capped(path)
    assert outcome["outcome"] == "ok" and outcome["result"] == ["bpe_byte", 257], outcome
    assert outcome["seconds"] < SECONDS and outcome["max_rss_mb"] < 300, outcome


def test_a_gguf_header_past_the_window_is_refused(tmp_path):
    # an array of 300 MiB declared before the tokenizer keys, the file sparse after it
    path = tmp_path / "huge-header.gguf"
    with open(path, "wb") as handle:
        handle.write(b"GGUF" + struct.pack("<IQQ", 3, 0, 2))
        handle.write(_gguf_string("general.blob") + struct.pack("<I", 9) + struct.pack("<IQ", 0, 300 * 2**20))
        handle.truncate(2 * 2**30)
    assert_refused(load_capped(path), "runs past its first", "bytes")


def test_gguf_merges_naming_missing_tokens_are_refused(tmp_path):
    path = tmp_path / "bad-merges.gguf"
    write_gguf(path, byte_level_pairs(merges=("Ġ t", "Ġt zz")))
    assert_refused(load_capped(path), "merge #1", "'zz'", "not a token")


def test_gguf_duplicate_tokens_are_refused_like_llama_cpp(tmp_path):
    path = tmp_path / "dup.gguf"
    write_gguf(path, byte_level_pairs(merges=(), extra_tokens=("Ġt", "Ġt")))
    assert_refused(load_capped(path), "duplicate token", "256 and 257")


def test_gguf_empty_tokens_are_named_as_llama_cpp_names_them(tmp_path):
    # llama-vocab.cpp: an empty token becomes "[EMPTY_<id>]" (a warning), so two empty ones are not duplicates
    path = tmp_path / "empty.gguf"
    write_gguf(path, byte_level_pairs(merges=(), extra_tokens=("", "Ġt", "")))
    tok = labkit.load(path, engine="labkit")
    assert tok.vocab.tokens[256:] == ["[EMPTY_256]", "Ġt", "[EMPTY_258]"]
    assert tok.decode([256, 258]) == "[EMPTY_256][EMPTY_258]"
    clash = tmp_path / "clash.gguf"
    write_gguf(clash, byte_level_pairs(merges=(), extra_tokens=("", "[EMPTY_256]")))
    assert_refused(load_capped(clash), "duplicate token", "256 and 257")


# ----------------------------------------------------------------------------- .model


def _piece(text: str, score: float, kind: int = 1) -> bytes:
    raw = text.encode("utf-8")
    body = b"\x0a" + bytes([len(raw)]) + raw + b"\x15" + struct.pack("<f", score)
    if kind != 1:
        body += b"\x18" + bytes([kind])
    return b"\x0a" + bytes([len(body)]) + body


def _model(pieces) -> bytes:
    trainer = b"\x18\x01"  # model_type = unigram
    return b"".join(pieces) + b"\x12" + bytes([len(trainer)]) + trainer


@pytest.mark.parametrize("score", [float("inf"), float("-inf"), float("nan")])
def test_a_model_with_a_non_finite_score_is_refused(tmp_path, score):
    path = tmp_path / "inf.model"
    path.write_bytes(_model([_piece("<unk>", 0.0, 2), _piece("▁a", score), _piece("b", -2.0)]))
    assert_refused(load_capped(path), "not a finite number")


def test_a_model_with_duplicate_pieces_is_refused_like_sentencepiece(tmp_path):
    import sentencepiece

    blob = _model([_piece("<unk>", 0.0, 2), _piece("▁a", -1.0), _piece("▁a", -2.0)])
    with pytest.raises(Exception):
        sentencepiece.SentencePieceProcessor(model_proto=blob)  # the reference refuses it
    path = tmp_path / "dup.model"
    path.write_bytes(blob)
    assert_refused(load_capped(path), "repeats piece #1")
