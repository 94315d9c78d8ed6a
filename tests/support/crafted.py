"""Crafted and mutated tokenizer files for the reader and engine fuzz tests.

Byte mutations (truncation, bit flips, inserted/deleted/overwritten bytes), JSON values of the
wrong type, and small files derived from the shipped ones (a 400-token GGUF, a trimmed
tokenizer.json) so that thousands of cases stay fast.
"""
from __future__ import annotations

import copy
import json
import random
import struct

from labkit.formats.gguf import read_gguf_kv
from labkit.paths import data_path

SEED = 20261122
INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff" * 4, b"\xff" * 8, b"\x00" * 8,
               struct.pack("<Q", 1 << 40), struct.pack("<I", 13), b"{", b"[", b"\"", b"\n", b" ", b"\xef\xbb\xbf"]
WRONG_VALUES = [[], {}, "x", "", 0, -1, 1 << 40, 1.5, True, None, [1, "a"], {"a": 1}, [[]], "<0xZZ>"]


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


def _small_charsmap() -> bytes:
    """A valid precompiled charsmap of 1,280 units with one rule, full-width 'Ａ' -> 'A' (a
    cut real blob is corrupt: labkit refuses it before any engine sees it)."""
    units = [0] * 1280
    units[0] = 256 << 10  # the root's children: block 256, then one block per byte
    key = "Ａ".encode("utf-8")
    for k, byte in enumerate(key):
        index, after = 256 * (k + 1) ^ byte, 256 * (k + 2)
        units[index] = ((index ^ after) << 10) | (0x100 if k == len(key) - 1 else 0) | byte
    units[256 * (len(key) + 1)] = 0x8000_0000  # the value: pool offset 0
    trie = struct.pack("<1280I", *units)
    return struct.pack("<I", len(trie)) + trie + b"A\0"


def unigram_tokenizer_json() -> dict:
    from labkit.formats.spm_model import read_spm_model
    import base64

    spm = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    return {
        "version": "1.0", "added_tokens": [
            # every field tokenizers requires, so the engines build from the unmutated file
            {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for i, c in ((1, "<s>"), (2, "</s>"))],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(_small_charsmap()).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": None, "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                  "vocab": [[t, s] for t, s in zip(spm.tokens[:300], spm.scores[:300])]},
    }
