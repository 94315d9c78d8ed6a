"""Fuzz the readers: mutated copies of every shipped file format must either read or raise
LabkitError, never anything else, and never hang.

Mutations: truncation, bit flips, inserted/deleted/overwritten bytes, empty files, JSON
values of the wrong type, and seeded random sequences of these. Most cases run on small
files derived from the shipped ones (a 400-token GGUF, the first lines of cl100k, a trimmed
tokenizer.json) so that thousands of cases stay fast; the full shipped files get fewer.
A case that runs longer than HANG_SECONDS is reported as a hang (a guard, not a timing test).
"""
from __future__ import annotations

import copy
import json
import random
import signal
import struct
import time
import zlib
from pathlib import Path

import pytest

from labkit.core import LabkitError
from labkit.formats.detect import read_vocab
from labkit.formats.gguf import read_gguf_kv
from labkit.paths import data_path

HANG_SECONDS = 20
SEED = 20261122
INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff" * 4, b"\xff" * 8, b"\x00" * 8,
               struct.pack("<Q", 1 << 40), struct.pack("<I", 13), b"{", b"[", b"\"", b"\n", b" ", b"\xef\xbb\xbf"]
WRONG_VALUES = [[], {}, "x", "", 0, -1, 1 << 40, 1.5, True, None, [1, "a"], {"a": 1}, [[]], "<0xZZ>"]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run_cases(name: str, target: Path, read_path: Path, cases) -> dict:
    """Write each (label, bytes) case to ``target``, read ``read_path``; collect escapes."""
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
            except LabkitError as exc:
                stats["rejected"] += 1
                assert str(exc), label
            except Hang:
                hangs.append(label)
            except Exception as exc:  # noqa: BLE001 - the point of the test
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


# ----------------------------------------------------------------------------- byte mutations


def _position(rng: random.Random, size: int, header_bias: int) -> int:
    if size == 0:
        return 0
    if rng.random() < 0.5:
        return rng.randrange(min(size, header_bias))
    return rng.randrange(size)


def mutate(data: bytes, rng: random.Random, header_bias: int = 512) -> tuple[str, bytes]:
    """One seeded mutation of ``data``: (label, new bytes)."""
    buf = bytearray(data)
    kind = rng.choice(["truncate", "flip", "flip", "insert", "delete", "overwrite", "interesting", "duplicate", "combo"])
    if kind == "combo":
        labels = []
        for _ in range(rng.randint(2, 4)):
            label, new = mutate(bytes(buf), rng, header_bias)
            labels.append(label)
            buf = bytearray(new)
        return "+".join(labels), bytes(buf)
    pos = _position(rng, len(buf), header_bias)
    if kind == "truncate":
        return f"truncate@{pos}", bytes(buf[:pos])
    if kind == "flip":
        bits = rng.randint(1, 3)
        for _ in range(bits):
            p = _position(rng, len(buf), header_bias)
            if buf:
                buf[p] ^= 1 << rng.randrange(8)
        return f"flip{bits}@{pos}", bytes(buf)
    if kind == "insert":
        chunk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        buf[pos:pos] = chunk
        return f"insert{len(chunk)}@{pos}", bytes(buf)
    if kind == "delete":
        n = rng.randint(1, 8)
        del buf[pos : pos + n]
        return f"delete{n}@{pos}", bytes(buf)
    if kind == "overwrite":
        n = rng.randint(1, 16)
        buf[pos : pos + n] = bytes(rng.randrange(256) for _ in range(n))
        return f"overwrite{n}@{pos}", bytes(buf)
    if kind == "interesting":
        value = rng.choice(INTERESTING)
        buf[pos : pos + len(value)] = value
        return f"interesting{value[:4]!r}@{pos}", bytes(buf)
    n = rng.randint(1, 64)
    buf[pos:pos] = buf[pos : pos + n]
    return f"duplicate{n}@{pos}", bytes(buf)


def byte_cases(data: bytes, count: int, seed: int, header_bias: int = 512):
    rng = random.Random(seed)
    yield "empty", b""
    for cut in (1, 3, 4, 8, 16, 24, 64, len(data) // 2, len(data) - 1):
        if 0 <= cut < len(data):
            yield f"truncate@{cut}", data[:cut]
    for _ in range(count):
        yield mutate(data, rng, header_bias)


# ----------------------------------------------------------------------------- JSON mutations


def _paths(node, prefix=(), out=None, limit=4000):
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(node, dict):
        for key, value in node.items():
            out.append(prefix + (key,))
            _paths(value, prefix + (key,), out, limit)
    elif isinstance(node, list):
        for index, value in enumerate(node[:50]):
            out.append(prefix + (index,))
            _paths(value, prefix + (index,), out, limit)
    return out


def json_cases(doc, count: int, seed: int, *, interesting_keys=()):
    """Replace a value somewhere in ``doc`` with one of the wrong type (or delete a key)."""
    rng = random.Random(seed)
    paths = _paths(doc)
    weighted = [p for p in paths if any(k in p for k in interesting_keys)] or paths
    yield "top-level list", json.dumps([doc]).encode()
    yield "top-level string", b'"tokenizer"'
    yield "top-level number", b"3"
    for n in range(count):
        new = copy.deepcopy(doc)
        path = rng.choice(weighted if n % 2 else paths)
        parent = new
        for key in path[:-1]:
            parent = parent[key]
        value = rng.choice(WRONG_VALUES)
        if isinstance(parent, dict) and rng.random() < 0.15:
            del parent[path[-1]]
            label = f"delete {path}"
        else:
            parent[path[-1]] = value
            label = f"{path} = {value!r}"
        yield label, json.dumps(new, ensure_ascii=False).encode("utf-8")


# ----------------------------------------------------------------------------- small derived files


def encode_gguf(kv: dict) -> bytes:
    """A GGUF v3 file (no tensors) holding ``kv``; types chosen from the Python values."""
    def string(s: str) -> bytes:
        raw = s.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw

    def value(v) -> tuple[int, bytes]:
        if isinstance(v, bool):
            return 7, struct.pack("<?", v)
        if isinstance(v, int):
            return 4, struct.pack("<I", v)
        if isinstance(v, float):
            return 6, struct.pack("<f", v)
        if isinstance(v, str):
            return 8, string(v)
        if isinstance(v, list):
            if v and isinstance(v[0], str):
                return 9, struct.pack("<IQ", 8, len(v)) + b"".join(string(s) for s in v)
            if v and isinstance(v[0], float):
                return 9, struct.pack("<IQ", 6, len(v)) + struct.pack(f"<{len(v)}f", *v)
            return 9, struct.pack("<IQ", 5, len(v)) + struct.pack(f"<{len(v)}i", *v)
        raise TypeError(type(v))

    items = [(k, v) for k, v in kv.items() if not k.startswith("GGUF.")]
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 0, len(items)))
    for key, v in items:
        vtype, payload = value(v)
        out += string(key) + struct.pack("<I", vtype) + payload
    return bytes(out)


def mini_gguf(name: str, size: int = 400) -> bytes:
    kv = read_gguf_kv(data_path(f"gguf/ggml-vocab-{name}.gguf"))
    tokens = kv["tokenizer.ggml.tokens"][:size]
    keep = set(tokens)
    small = {}
    for key, v in kv.items():
        if key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.scores"):
            small[key] = v[:size]
        elif key == "tokenizer.ggml.merges":
            small[key] = [m for m in v[:2000] if all(p in keep for p in m.split(" ", 1)) and m.replace(" ", "", 1) in keep]
        elif key.endswith("_token_id"):
            small[key] = min(v, size - 1)
        else:
            small[key] = v
    return encode_gguf(small)


def trimmed_minilm(size: int = 600) -> dict:
    doc = json.loads(data_path("hf/all-MiniLM-L6-v2/tokenizer.json").read_text(encoding="utf-8"))
    doc["model"]["vocab"] = {t: i for t, i in doc["model"]["vocab"].items() if i < size}
    return doc


def bpe_tokenizer_json(size: int = 400) -> dict:
    kv = read_gguf_kv(data_path("gguf/ggml-vocab-gpt-2.gguf"))
    tokens = kv["tokenizer.ggml.tokens"][:size]
    keep = set(tokens)
    merges = [m for m in kv["tokenizer.ggml.merges"][:2000] if m.replace(" ", "", 1) in keep]
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": size, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\p{N}| ?\\p{L}+"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [], "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [size], "tokens": ["<|endoftext|>"]}}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)}, "merges": [m.split(" ") for m in merges]},
    }


def unigram_tokenizer_json() -> dict:
    from labkit.formats.spm_model import read_spm_model
    import base64

    spm = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    return {
        "version": "1.0", "added_tokens": [{"id": 1, "content": "<s>", "special": True}, {"id": 2, "content": "</s>", "special": True}],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(spm.normalizer["charsmap"][:4096]).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": None, "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                  "vocab": [[t, s] for t, s in zip(spm.tokens[:300], spm.scores[:300])]},
    }


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
    run_cases(f"{which} tokenizer.json wrong types", target, folder,
              json_cases(doc, 250, SEED + 31, interesting_keys=("model", "added_tokens", "post_processor", "normalizer", "pre_tokenizer")))
    run_cases(f"{which} tokenizer.json bytes", target, folder, byte_cases(raw, 120, SEED + 32, header_bias=len(raw)))
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
