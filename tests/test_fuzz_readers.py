"""Fuzz the readers: mutated copies of every shipped file format must either read or raise
LabkitError, never anything else, and never hang.

Mutations: truncation, bit flips, inserted/deleted/overwritten bytes, empty files, JSON
values of the wrong type, and seeded random sequences of these. Most cases run on small
files derived from the shipped ones (a 400-token GGUF, the first lines of cl100k, a trimmed
tokenizer.json) so that thousands of cases stay fast; the full shipped files get fewer.
A case that runs longer than HANG_SECONDS is reported as a hang (a guard, not a timing test).
"""
from __future__ import annotations

import json
import random
import signal
import struct
import time
import zlib
from pathlib import Path

import pytest

import labkit
from labkit.core import LabkitError
from labkit.formats.detect import read_vocab
from labkit.formats.gguf import read_gguf_kv
from labkit.paths import data_path
from support.crafted import (
    SEED,
    bpe_tokenizer_json,
    byte_cases,
    encode_gguf,
    json_cases,
    mini_gguf,
    trimmed_minilm,
    unigram_tokenizer_json,
)

HANG_SECONDS = 20


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run_cases(name: str, target: Path, read_path: Path, cases, engines=()) -> dict:
    """Write each (label, bytes) case to ``target``, read ``read_path`` (and, where it reads,
    build each of ``engines`` from it and encode a line); collect escapes."""
    escapes, hangs = [], []
    stats = {"read": 0, "rejected": 0, "cases": 0, "slowest": (0.0, "")}
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for label, content in cases:
            target.write_bytes(content)
            stats["cases"] += 1
            started = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
            try:
                read_vocab(read_path)
                stats["read"] += 1
                for engine in engines:
                    try:
                        labkit.load(read_path, engine=engine).encode("Hello wörld <s> 日本 ")
                        stats["built"] = stats.get("built", 0) + 1
                    except LabkitError as exc:
                        assert str(exc), label
                        stats["engine refused"] = stats.get("engine refused", 0) + 1
            except LabkitError as exc:
                stats["rejected"] += 1
                assert str(exc), label
            except Hang:
                hangs.append(label)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - the point of the test (a Rust panic is a BaseException)
                escapes.append(f"{label}: {type(exc).__name__}: {str(exc)[:120]}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            elapsed = time.perf_counter() - started
            if elapsed > stats["slowest"][0]:
                stats["slowest"] = (elapsed, label)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not hangs, f"{name}: {len(hangs)} cases ran over {HANG_SECONDS}s: {hangs[:5]}"
    assert not escapes, f"{name}: {len(escapes)} non-LabkitError escapes:\n" + "\n".join(escapes[:15])
    print(f"{name}: {stats}")
    return stats


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("name,count", [("gpt-2", 300), ("llama-spm", 300), ("bert-bge", 300), ("qwen2", 300)])
def test_fuzz_small_gguf(tmp_path, name, count):
    data = mini_gguf(name)
    target = tmp_path / "mini.gguf"
    target.write_bytes(data)
    read_vocab(target)  # the unmutated file reads
    run_cases(f"mini {name}.gguf", target, target, byte_cases(data, count, SEED + zlib.crc32(name.encode()) % 1000, header_bias=2048))


@pytest.mark.parametrize("name,count", [("gpt-2", 12), ("llama-spm", 25), ("bert-bge", 25), ("qwen2", 5)])
def test_fuzz_full_gguf(tmp_path, name, count):
    data = data_path(f"gguf/ggml-vocab-{name}.gguf").read_bytes()
    target = tmp_path / f"ggml-vocab-{name}.gguf"
    cases = list(byte_cases(data, count, SEED + 7, header_bias=4096))
    run_cases(f"{name}.gguf", target, target, cases[:3] + cases[-count:])


@pytest.mark.parametrize("name", ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model"])
def test_fuzz_spm_model(tmp_path, name):
    data = data_path(f"sentencepiece/{name}").read_bytes()
    target = tmp_path / name
    run_cases(name, target, target, byte_cases(data, 250, SEED + 11, header_bias=200))
    # the header-sized prefix: the first pieces, cut anywhere
    rng = random.Random(SEED + 12)
    prefix = data[:4096]
    run_cases(f"{name} prefix", target, target, ((f"prefix{c}", prefix[:c]) for c in sorted(rng.sample(range(4096), 150))))


def test_fuzz_tiktoken(tmp_path):
    data = data_path("tiktoken/cl100k_base.tiktoken").read_bytes()
    small = b"\n".join(data.split(b"\n")[:1500]) + b"\n"
    target = tmp_path / "small.tiktoken"
    run_cases("cl100k prefix", target, target, byte_cases(small, 300, SEED + 21, header_bias=4096))
    named = tmp_path / "cl100k_base.tiktoken"
    run_cases("cl100k full", named, named, list(byte_cases(data, 6, SEED + 22, header_bias=4096))[-6:])
    unnamed = tmp_path / "unknown.tiktoken"
    run_cases("cl100k full unnamed", unnamed, unnamed, list(byte_cases(data, 3, SEED + 23, header_bias=4096))[-3:])


def _folder(tmp_path: Path, doc: dict, config: dict | None = None) -> Path:
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    if config is not None:
        (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("which", ["wordpiece", "bpe", "unigram"])
def test_fuzz_tokenizer_json(tmp_path, which):
    doc = {"wordpiece": trimmed_minilm, "bpe": bpe_tokenizer_json, "unigram": unigram_tokenizer_json}[which]()
    config = {"bos_token": {"content": "<|endoftext|>", "__type": "AddedToken"}, "eos_token": "</s>",
              "add_bos_token": True, "chat_template": [{"name": "default", "template": "x"}]}
    folder = _folder(tmp_path, doc, config)
    read_vocab(folder)  # the unmutated folder reads
    target = folder / "tokenizer.json"
    raw = target.read_bytes()
    # engines too: labkit's pipeline hands the file to tokenizers' own parser (which may panic)
    engines = ("labkit", "hf")
    run_cases(f"{which} tokenizer.json wrong types", target, folder,
              json_cases(doc, 250, SEED + 31, interesting_keys=("model", "added_tokens", "post_processor", "normalizer", "pre_tokenizer")),
              engines)
    run_cases(f"{which} tokenizer.json bytes", target, folder, byte_cases(raw, 120, SEED + 32, header_bias=len(raw)), engines)
    target.write_bytes(raw)
    config_path = folder / "tokenizer_config.json"
    run_cases(f"{which} tokenizer_config.json", config_path, folder, json_cases(config, 60, SEED + 33))


def test_fuzz_full_minilm(tmp_path):
    folder = tmp_path / "minilm"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        (folder / name).write_bytes(data_path(f"hf/all-MiniLM-L6-v2/{name}").read_bytes())
    raw = (folder / "tokenizer.json").read_bytes()
    run_cases("minilm tokenizer.json", folder / "tokenizer.json", folder, byte_cases(raw, 40, SEED + 41, header_bias=4096))
    vocab_txt = (folder / "vocab.txt").read_bytes()
    (folder / "tokenizer.json").unlink()
    run_cases("minilm vocab.txt", folder / "vocab.txt", folder, byte_cases(vocab_txt, 150, SEED + 42, header_bias=2048))


def test_fuzz_vocab_json_merges(tmp_path):
    doc = bpe_tokenizer_json()
    vocab = dict(doc["model"]["vocab"], **{"<|endoftext|>": len(doc["model"]["vocab"])})
    merges = "#version: 0.2\n" + "\n".join(" ".join(m) for m in doc["model"]["merges"]) + "\n"
    (tmp_path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "merges.txt").write_text(merges, encoding="utf-8")
    read_vocab(tmp_path)
    run_cases("merges.txt", tmp_path / "merges.txt", tmp_path, byte_cases(merges.encode(), 150, SEED + 51, header_bias=2048))
    (tmp_path / "merges.txt").write_text(merges, encoding="utf-8")
    run_cases("vocab.json types", tmp_path / "vocab.json", tmp_path, json_cases(vocab, 100, SEED + 52))
    raw = (tmp_path / "vocab.json").read_bytes()
    run_cases("vocab.json bytes", tmp_path / "vocab.json", tmp_path / "vocab.json", byte_cases(json.dumps(vocab).encode(), 100, SEED + 53))
    del raw


def test_fuzz_chat_template_side_files(tmp_path):
    folder = _folder(tmp_path, trimmed_minilm(), {"chat_template": "c"})
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": "j"}), encoding="utf-8")
    run_cases("chat_template.json", folder / "chat_template.json", folder,
              json_cases({"chat_template": [{"name": "default", "template": "t"}]}, 40, SEED + 61))
    (folder / "chat_template.json").unlink()
    run_cases("chat_template.jinja", folder / "chat_template.jinja", folder,
              [("latin-1", "é{{ x }}".encode("latin-1")), ("bom", b"\xef\xbb\xbf{{ x }}"), ("empty", b""), ("nul", b"\x00\x00")])


# ----------------------------------------------------------------------------- crafted cases


def _crafted_cases():
    """Hand-made wrong-type and extreme inputs that random mutation rarely reaches."""
    kv = read_gguf_kv(data_path("gguf/ggml-vocab-llama-spm.gguf"))
    spm = {k: (v[:300] if isinstance(v, list) else v) for k, v in kv.items()}
    charsmap = "tokenizer.ggml.precompiled_charsmap"
    yield "gguf charsmap strings", "a.gguf", encode_gguf({**spm, charsmap: ["a", "b"]})
    yield "gguf charsmap floats", "a.gguf", encode_gguf({**spm, charsmap: [1.5, 2.5]})
    yield "gguf charsmap out of range", "a.gguf", encode_gguf({**spm, charsmap: [1, -2, 300]})
    yield "gguf tokens ints", "a.gguf", encode_gguf({**spm, "tokenizer.ggml.tokens": list(range(300))})
    yield "gguf types floats", "a.gguf", encode_gguf({**spm, "tokenizer.ggml.token_type": [1.0] * 300})
    yield "gguf scores strings", "a.gguf", encode_gguf({**spm, "tokenizer.ggml.scores": ["1"] * 300})
    yield "gguf model int", "a.gguf", encode_gguf({**spm, "tokenizer.ggml.model": 3})
    yield "gguf model unknown", "a.gguf", encode_gguf({**spm, "tokenizer.ggml.model": "rwkv"})
    yield "gguf add_bos string", "a.gguf", encode_gguf({**spm, "tokenizer.ggml.add_bos_token": "yes"})
    yield "gguf version 1", "a.gguf", b"GGUF" + struct.pack("<IQQ", 1, 0, 0)
    yield "gguf kv count huge", "a.gguf", b"GGUF" + struct.pack("<IQQ", 3, 0, 1 << 60)
    nested = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k" + struct.pack("<I", 9)
    yield "gguf arrays nested deep", "a.gguf", nested + struct.pack("<IQ", 9, 1) * 8 + struct.pack("<IQ", 4, 1) + b"\x00" * 4
    doc = trimmed_minilm()
    for depth in (50, 700):
        deep = '{"type": "Sequence", "normalizers": [' * depth + '{"type": "Lowercase"}' + "]}" * depth
        yield f"normalizer Sequence x{depth}", "tokenizer.json", json.dumps(dict(doc, normalizer="@")).replace('"@"', deep).encode()
        deep = '{"type": "Sequence", "processors": [' * depth + '{"type": "BertProcessing"}' + "]}" * depth
        yield f"post_processor Sequence x{depth}", "tokenizer.json", json.dumps(dict(doc, post_processor="@")).replace('"@"', deep).encode()
    yield "deep JSON array", "tokenizer.json", b"[" * 100000 + b"]" * 100000
    yield "deep JSON object", "tokenizer.json", b'{"a":' * 100000 + b"1" + b"}" * 100000
    yield "5000-digit id", "tokenizer.json", b'{"model": {"type": "WordPiece", "vocab": {"a": ' + b"9" * 5000 + b"}}}"
    yield "id 10**12", "tokenizer.json", json.dumps(dict(doc, model=dict(doc["model"], vocab={"a": 10**12}))).encode()
    yield "added id 10**12", "tokenizer.json", json.dumps(dict(doc, added_tokens=[{"id": 10**12, "content": "x"}])).encode()
    yield "added id bool", "tokenizer.json", json.dumps(dict(doc, added_tokens=[{"id": True, "content": "x"}])).encode()
    yield "NaN score", "tokenizer.json", b'{"model": {"type": "Unigram", "vocab": [["a", NaN]], "unk_id": 0}}'
    yield "unigram unk_id -1", "tokenizer.json", b'{"model": {"type": "Unigram", "vocab": [["a", 1]], "unk_id": -1}}'
    yield "BertProcessing ids out of range", "tokenizer.json", json.dumps(
        dict(doc, post_processor={"type": "BertProcessing", "cls": ["[CLS]", 10**9], "sep": ["[SEP]", -5]})).encode()
    yield "merge of one part", "tokenizer.json", json.dumps(dict(doc, model={"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]})).encode()
    yield "model WordLevel", "tokenizer.json", json.dumps(dict(doc, model={"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"})).encode()
    yield "model Mystery", "tokenizer.json", json.dumps(dict(doc, model={"type": "Mystery"})).encode()
    yield "spm only a trainer spec", "x.model", b"\x12\x02\x18\x01"
    yield "spm group wire type", "x.model", b"\x0a\x07\x0a\x05<unk>" + b"\x4b"
    yield "spm negative length", "x.model", b"\x0a" + b"\xff" * 9 + b"\x01"
    yield "tiktoken unicode digit", "x.tiktoken", "IQ== \u0661\n".encode()
    yield "tiktoken rank 10**11", "x.tiktoken", b"IQ== 99999999999\n"
    yield "vocab.txt CRLF", "vocab.txt", b"[PAD]\r\n[UNK]\r\na\r\n"
    yield "vocab.txt blank line", "vocab.txt", b"[PAD]\n\n[UNK]\n"


def test_crafted_inputs(tmp_path):
    folder = tmp_path / "crafted"
    folder.mkdir()
    escapes = []
    for label, name, content in _crafted_cases():
        for old in folder.iterdir():
            old.unlink()
        path = folder / name
        path.write_bytes(content)
        try:
            read_vocab(path)
        except LabkitError:
            pass
        except Exception as exc:  # noqa: BLE001
            escapes.append(f"{label}: {type(exc).__name__}: {str(exc)[:120]}")
    assert not escapes, "\n".join(escapes)


def test_config_with_huge_added_token_key(tmp_path):
    folder = _folder(tmp_path, trimmed_minilm(), {"added_tokens_decoder": {"9" * 5000: {"content": "x"}}})
    with pytest.raises(LabkitError, match="not an id"):
        read_vocab(folder)
