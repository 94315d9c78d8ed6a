"""Fuzz the engines: mutated vocabularies pushed all the way through ``labkit.load`` and the
Tokenizer surface. Whatever the file, each engine either refuses it or serves it, and then
every call (encode, decode, id_to_token, token_to_id) answers or raises LabkitError; nothing
else escapes, and no case hangs.

The readers alone are fuzzed in test_fuzz_readers.py; its small derived files (a 400-token
GGUF, a trimmed tokenizer.json, the first lines of cl100k) and its byte/JSON mutators are
reused here. On top of those, structured mutations change the values a reader accepts (model
and pre-tokenizer names, special ids, token spellings, types, scores, merges) so that most
cases reach the engines rather than stopping in the reader.

A case (one mutated file through one engine) that runs longer than HANG_SECONDS of CPU time
is reported as a hang: a guard, not a timing test.
"""
from __future__ import annotations

import dataclasses
import json
import math
import random
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from support.crafted import (
    SEED,
    bpe_tokenizer_json,
    byte_cases,
    encode_gguf,
    json_cases,
    trimmed_minilm,
)

import labkit
from labkit.core import Encoding, LabkitError
from labkit.engines.hf_export import to_tokenizer_json
from labkit.formats.gguf import read_gguf_kv
from labkit.formats.spm_model import read_spm_model, write_model_proto
from labkit.paths import data_path

ENGINES = ("labkit", "hf", "tiktoken", "sentencepiece", None)
HANG_SECONDS = 20
TEXTS = [
    "Hello world",
    "  don't   stop 12345 !!",
    "🤗👍🏽 ok",
    "日本語のテキストと한국어",
    "",
    "\n\t x\r\n",
    "<|endoftext|>a<s>b</s>[CLS] c [SEP]<unk><|im_start|>",
    "<0x41>▁##ing\u2581\u2581",
    "Ａ１ ﬁne ①  ｶﾞ e\u0301 x\u00a0y",  # the tiny charsmap's keys (and NFKC's)
    "\ud800 lone",
    "\x00\ufeff\u200b\ufffe0\ufffe\U0010ffff\x7f",  # NUL, BOM, zero width, noncharacters, DEL
]
HUGE_ID = 2**70


class Hang(BaseException):
    """Raised by the CPU timer; a BaseException so that no engine's ``except Exception`` hides it."""


def _on_timer(signum, frame):
    raise Hang()


class Recorder:
    """Runs calls that may raise LabkitError, and records whatever else escapes."""

    def __init__(self):
        self.escapes: list[str] = []
        self.calls = 0

    def call(self, label: str, fn, *args, **kwargs):
        self.calls += 1
        try:
            return fn(*args, **kwargs)
        except LabkitError as exc:
            assert str(exc), label
            return None
        except (Hang, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - PanicException is a BaseException
            self.escapes.append(f"{label}: {type(exc).__name__}: {str(exc)[:160]}")
            return None

    def must_raise(self, label: str, fn, *args, **kwargs):
        self.calls += 1
        try:
            result = fn(*args, **kwargs)
        except LabkitError:
            return
        except (Hang, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001
            self.escapes.append(f"{label}: {type(exc).__name__}: {str(exc)[:160]}")
            return
        self.escapes.append(f"{label}: returned {result!r:.80} instead of raising LabkitError")


def _check_encoding(rec: Recorder, label: str, enc, text: str, vocab_size: int) -> None:
    if not isinstance(enc, Encoding):
        rec.escapes.append(f"{label}: encode returned {type(enc).__name__}")
        return
    if not (len(enc.ids) == len(enc.tokens) == len(enc.offsets)):
        rec.escapes.append(f"{label}: {len(enc.ids)} ids, {len(enc.tokens)} tokens, {len(enc.offsets)} offsets")
    bad = [i for i in enc.ids if type(i) is not int or not 0 <= i < vocab_size]
    if bad:
        rec.escapes.append(f"{label}: ids outside the vocab (size {vocab_size}): {bad[:5]}")
    spans = [o for o in enc.offsets if not (len(o) == 2 and 0 <= o[0] <= o[1] <= len(text))]
    if spans:
        rec.escapes.append(f"{label}: offsets outside the text ({len(text)} chars): {spans[:3]}")


def exercise(tok, rec: Recorder, rng: random.Random, label: str) -> None:
    """The whole Tokenizer surface on a few texts and ids; records what escapes."""
    size = rec.call(f"{label} vocab_size", lambda: tok.vocab_size)
    if not isinstance(size, int):
        rec.escapes.append(f"{label}: vocab_size is {size!r}")
        return
    texts = list(TEXTS)
    added = [a.content for a in tok.vocab.added_tokens[:3]]
    if size:
        picks = [tok.vocab.tokens[rng.randrange(size)] for _ in range(3)]
        texts.append("".join(added) + " " + "".join(picks) + "".join(reversed(added)))
    seen_ids: list[int] = []
    for text in texts:
        for parse_special in (True, False):
            for add_special in (True, False):
                where = f"{label} encode({text[:20]!r}, parse_special={parse_special}, add_special_tokens={add_special})"
                enc = rec.call(where, tok.encode, text, parse_special=parse_special, add_special_tokens=add_special)
                if enc is None:
                    continue
                _check_encoding(rec, where, enc, text, size)
                seen_ids.extend(i for i in enc.ids if type(i) is int and 0 <= i < size)
                for skip in (False, True):
                    got = rec.call(f"{where} decode(skip={skip})", tok.decode, enc.ids, skip_special_tokens=skip)
                    if got is not None and not isinstance(got, str):
                        rec.escapes.append(f"{where}: decode returned {type(got).__name__}")
    rec.call(f"{label} encode_batch", tok.encode_batch, TEXTS[:3])
    if size:
        for _ in range(3):
            ids = [rng.randrange(size) for _ in range(rng.randint(1, 12))] + rng.sample(seen_ids, min(3, len(seen_ids)))
            rng.shuffle(ids)
            for skip in (False, True):
                got = rec.call(f"{label} decode({ids[:6]}..., skip={skip})", tok.decode, ids, skip_special_tokens=skip)
                if got is not None and not isinstance(got, str):
                    rec.escapes.append(f"{label}: decode returned {type(got).__name__}")
        for index in {0, size - 1, rng.randrange(size)}:
            token = rec.call(f"{label} id_to_token({index})", tok.id_to_token, index)
            if token is None:
                continue
            back = rec.call(f"{label} token_to_id({token!r:.30})", tok.token_to_id, token)
            if back is not None and not (type(back) is int and 0 <= back < size):
                rec.escapes.append(f"{label}: token_to_id({token!r:.30}) -> {back!r}")
    for bad in (-1, size, HUGE_ID):
        rec.must_raise(f"{label} decode([{bad}])", tok.decode, [bad])
        rec.must_raise(f"{label} id_to_token({bad})", tok.id_to_token, bad)
    rec.call(f"{label} apply_chat_template", tok.apply_chat_template, [{"role": "user", "content": "hi"}],
             add_generation_prompt=True)
    if seen_ids:
        stream_ids = seen_ids[:24]
        stream = rec.call(f"{label} DecodeStream", labkit.DecodeStream, tok)
        if stream is not None:
            for token_id in stream_ids:
                rec.call(f"{label} DecodeStream.step({token_id})", stream.step, token_id)
            rec.call(f"{label} DecodeStream.flush", stream.flush)
        config = labkit.StopSequenceConfig(stop_sequences=["e", "\n\n"])
        stop = rec.call(f"{label} StopSequenceDecoder", labkit.StopSequenceDecoder, tok, config)
        if stop is not None:
            rec.call(f"{label} StopSequenceDecoder.process_tokens", stop.process_tokens, stream_ids)
            rec.call(f"{label} StopSequenceDecoder.flush", stop.flush)
    cache = labkit.CacheConfig(enable_l0=True, enable_l1=True)
    # building a cache fingerprints the vocab and probes its boundaries: a third of the cases suffice
    cached = rec.call(f"{label} CachedTokenizer", labkit.CachedTokenizer, tok, cache) if rng.random() < 0.35 else None
    if cached is not None:
        for text in (texts[-1], texts[-1] + " more", TEXTS[6]):
            want = rec.call(f"{label} encode({text[:20]!r})", tok.encode, text)
            got = rec.call(f"{label} CachedTokenizer.encode({text[:20]!r})", cached.encode, text)
            if want is not None and got is not None and got.ids != want.ids:
                rec.escapes.append(f"{label}: CachedTokenizer.encode({text[:30]!r}) gives {got.ids[:8]}..., the engine {want.ids[:8]}...")
    got = rec.call(f"{label} token_to_id(unknown)", tok.token_to_id, "\x00never a token\x00")
    if got is not None and not (type(got) is int and 0 <= got < size):
        rec.escapes.append(f"{label}: token_to_id(unknown) -> {got!r}")


def run_engine_cases(name: str, target: Path, load_path: Path, cases, *, seed: int) -> dict:
    """Write each (label, bytes) case to ``target``; load ``load_path`` with every engine and
    exercise what loads. Fails on any escape or hang."""
    rec = Recorder()
    hangs: list[str] = []
    stats = {"files": 0, "loads": 0, "served": 0, "calls": 0, "slowest": (0.0, "")}
    rng = random.Random(seed)
    previous = signal.signal(signal.SIGVTALRM, _on_timer)
    try:
        for label, content in cases:
            target.write_bytes(content)
            stats["files"] += 1
            for engine in ENGINES:
                stats["loads"] += 1
                where = f"{name} {label} engine={engine}"
                signal.setitimer(signal.ITIMER_VIRTUAL, HANG_SECONDS)
                started = time.process_time()
                try:
                    tok = rec.call(f"{where} load", labkit.load, load_path, engine=engine)
                    if tok is not None:
                        stats["served"] += 1
                        exercise(tok, rec, rng, where)
                except Hang:
                    hangs.append(where)
                finally:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                elapsed = time.process_time() - started
                if elapsed > stats["slowest"][0]:
                    stats["slowest"] = (round(elapsed, 2), where)
    finally:
        signal.signal(signal.SIGVTALRM, previous)
    stats["calls"] = rec.calls
    assert not hangs, f"{name}: {len(hangs)} cases ran over {HANG_SECONDS}s of CPU: {hangs[:5]}"
    assert not rec.escapes, f"{name}: {len(rec.escapes)} escapes:\n" + "\n".join(rec.escapes[:20])
    print(f"{name}: {stats}")
    return stats


# ----------------------------------------------------------------------------- a tiny charsmap


def tiny_charsmap(rules: dict[str, str], units_count: int = 1024) -> bytes:
    """A precompiled charsmap (darts-clone double array + NUL-terminated pool) for a few rules.

    The real ones are ~190 KB and labkit enumerates a new one in ~0.5 s; a tiny one keeps
    hundreds of mutated charsmaps fast. sentencepiece wants a multiple of 1024 units.
    """
    pool, values = bytearray(), {}
    for key, replacement in rules.items():
        values[key.encode()] = len(pool)
        pool += replacement.encode() + b"\0"
    root: dict = {}
    for key, value in values.items():
        node = root
        for byte in key:
            node = node.setdefault(byte, {})
        node[None] = value  # the key ends here
    units = [0] * units_count
    used, bases = {0}, set()

    def place(index: int, node: dict) -> None:
        labels = [b for b in node if b is not None]
        leaf = None in node
        base = 1
        while True:  # the first free block: every child slot (and the value slot) unused
            slots = [base ^ c for c in labels] + ([base] if leaf else [])
            if base not in bases and all(s not in used and s < units_count for s in slots):
                break
            base += 1
        units[index] |= ((index ^ base) << 10) | (0x100 if leaf else 0)
        used.update(slots)
        bases.add(base)
        if leaf:
            units[base] = 0x80000000 | node[None]
        for c in labels:
            units[base ^ c] = c
        for c in labels:
            place(base ^ c, node[c])

    place(0, root)
    return struct.pack("<I", 4 * units_count) + struct.pack(f"<{units_count}I", *units) + bytes(pool)


TINY_RULES = {"Ａ": "A", "①": "1", "ﬁ": "fi", "ｶﾞ": "ガ", "\u00a0": " ", "e\u0301": "é", "Ａ１": "A1"}
TINY_CHARSMAP = tiny_charsmap(TINY_RULES)


# ----------------------------------------------------------------------------- structured GGUF mutations

SPECIAL_SPELLINGS = ["<|endoftext|>", "<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "<|im_start|>", "<0x41>", "<0xZZ>"]
ODD_TOKENS = ["", " ", "\u2581", "##", "a" * 300, "\x00", "\ufffd", "🤗", "Ġ", "<0x80>", "<0xC3>"]
MODELS = ["gpt2", "llama", "bert", "t5", "rwkv", "plamo2", "gemma4", "whitespace", "", "none", "GPT2"]
PRES = ["default", "gpt-2", "qwen2", "llama3", "llama-bpe", "bert-bge", "cl100k", "smaug-bpe", "deepseek-llm", "nonsense", "",
        "gemma4", "sarvam-moe", "whitespace"]
ID_KEYS = ["bos_token_id", "eos_token_id", "unknown_token_id", "seperator_token_id", "padding_token_id",
           "cls_token_id", "mask_token_id", "eot_token_id"]


def mini_kv(name: str, size: int = 300) -> dict:
    """The tokenizer keys of a shipped GGUF cut to ``size`` tokens (merges kept consistent)."""
    kv = read_gguf_kv(data_path(f"gguf/ggml-vocab-{name}.gguf"))
    tokens = kv["tokenizer.ggml.tokens"][:size]
    keep = set(tokens)
    small = {}
    for key, value in kv.items():
        if not key.startswith("tokenizer.") or key == "tokenizer.chat_template":
            continue
        if key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.scores"):
            small[key] = value[:size]
        elif key == "tokenizer.ggml.merges":
            small[key] = [m for m in value[:3000] if all(p in keep for p in m.split(" ", 1)) and m.replace(" ", "", 1) in keep]
        elif key.endswith("_token_id"):
            small[key] = min(value, size - 1)
        else:
            small[key] = value
    return small


def _mutate_kv(kv: dict, rng: random.Random) -> str:
    """Change one value the GGUF reader is likely to accept; returns a label."""
    tokens = kv["tokenizer.ggml.tokens"]
    n = len(tokens)
    kind = rng.choice(["model", "pre", "special_id", "flag", "types", "tokens", "tokens", "scores",
                       "merges", "merges", "lengths", "charsmap", "template", "add_special"])
    if kind == "model":
        value = rng.choice(MODELS)
        kv["tokenizer.ggml.model"] = value
        return f"model={value!r}"
    if kind == "pre":
        value = rng.choice(PRES)
        kv["tokenizer.ggml.pre"] = value
        return f"pre={value!r}"
    if kind == "special_id":
        key = "tokenizer.ggml." + rng.choice(ID_KEYS)
        value = rng.choice([0, 1, n - 1, n, n + 5, 2**31, rng.randrange(n)])
        kv[key] = value
        return f"{key}={value}"
    if kind in ("flag", "add_special"):
        key = "tokenizer.ggml." + rng.choice(["add_bos_token", "add_eos_token", "add_space_prefix",
                                              "remove_extra_whitespaces", "add_sep_token"])
        kv[key] = rng.random() < 0.5
        return f"{key}={kv[key]}"
    if kind == "types" and "tokenizer.ggml.token_type" in kv:
        types = list(kv["tokenizer.ggml.token_type"])
        picks = rng.sample(range(len(types)), min(len(types), rng.randint(1, 40)))
        for i in picks:
            types[i] = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 99])
        kv["tokenizer.ggml.token_type"] = types
        return f"types x{len(picks)}"
    if kind in ("tokens", "types"):
        tokens = list(tokens)
        count = rng.randint(1, 12)
        for _ in range(count):
            i = rng.randrange(n)
            tokens[i] = rng.choice([rng.choice(ODD_TOKENS), rng.choice(SPECIAL_SPELLINGS), tokens[rng.randrange(n)],
                                    tokens[i] + tokens[rng.randrange(n)]])
        kv["tokenizer.ggml.tokens"] = tokens
        return f"tokens x{count}"
    if kind == "scores" and "tokenizer.ggml.scores" in kv:
        scores = list(kv["tokenizer.ggml.scores"])
        count = rng.randint(1, 20)
        for _ in range(count):
            scores[rng.randrange(len(scores))] = rng.choice([math.nan, math.inf, -math.inf, 1e30, -1e30, 0.0])
        kv["tokenizer.ggml.scores"] = scores
        return f"scores x{count}"
    if kind in ("merges", "scores"):
        merges = list(kv.get("tokenizer.ggml.merges") or ["a b"])
        how = rng.choice(["shuffle", "drop", "unknown", "malformed", "empty", "reverse"])
        if how == "shuffle":
            i = rng.randrange(len(merges))
            j = rng.randrange(len(merges))
            merges[i], merges[j] = merges[j], merges[i]
        elif how == "drop":
            del merges[rng.randrange(len(merges))]
        elif how == "unknown":
            merges.insert(rng.randrange(len(merges) + 1), rng.choice(["zz qq", "Ġ \u2581", "<s> </s>"]))
        elif how == "malformed":
            merges[rng.randrange(len(merges))] = rng.choice(["a", "", " ", "a  b", "a b c"])
        elif how == "empty":
            merges = []
        else:
            merges.reverse()
        kv["tokenizer.ggml.merges"] = merges
        return f"merges {how}"
    if kind == "lengths":
        key = rng.choice(["tokenizer.ggml.token_type", "tokenizer.ggml.scores", "tokenizer.ggml.tokens"])
        if key in kv:
            kv[key] = kv[key][: rng.randrange(len(kv[key]))] if rng.random() < 0.7 else kv[key] + kv[key][:5]
        return f"length of {key}"
    if kind == "charsmap":
        charsmap = TINY_CHARSMAP
        cut = rng.choice([len(charsmap), len(charsmap) - 3, 4100, 8, 0])
        kv["tokenizer.ggml.precompiled_charsmap"] = list(charsmap[:cut])
        return f"charsmap[:{cut}]"
    template = rng.choice(["{{ messages[0].content }}", "{% for m in messages %}", "", "{{ 1/0 }}"])
    kv["tokenizer.chat_template"] = template
    return f"chat_template={template!r}"


def kv_cases(kv: dict, count: int, seed: int):
    rng = random.Random(seed)
    yield "unmutated", encode_gguf(kv)
    for _ in range(count):
        new = dict(kv)
        labels = [_mutate_kv(new, rng) for _ in range(rng.choice([1, 1, 2, 3]))]
        try:
            yield "+".join(labels), encode_gguf(new)
        except Exception:  # noqa: BLE001 - encode_gguf cannot pack this value type; not a case
            continue


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("name,count", [("gpt-2", 90), ("llama-spm", 90), ("bert-bge", 70), ("qwen2", 70)])
def test_fuzz_gguf_values(tmp_path, name, count):
    kv = mini_kv(name)
    target = tmp_path / "mini.gguf"
    seed = SEED + zlib.crc32(name.encode()) % 1000
    stats = run_engine_cases(f"mini {name}.gguf values", target, target, kv_cases(kv, count, seed), seed=seed)
    # most mutated files reach an engine (a bert GGUF has one: engine="hf" refuses it)
    assert stats["served"] > stats["files"] * (0.8 if name == "bert-bge" else 1)


@pytest.mark.parametrize("name,count", [("gpt-2", 50), ("llama-spm", 50), ("bert-bge", 40)])
def test_fuzz_gguf_bytes(tmp_path, name, count):
    data = encode_gguf(mini_kv(name))
    target = tmp_path / "mini.gguf"
    seed = SEED + 100 + zlib.crc32(name.encode()) % 1000
    run_engine_cases(f"mini {name}.gguf bytes", target, target, byte_cases(data, count, seed, header_bias=len(data)), seed=seed)


@pytest.mark.parametrize("name", ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model"])
def test_fuzz_spm_model(tmp_path, name):
    # with the tiny charsmap the pieces are most of the file; the real charsmap gets its own test
    vocab = read_spm_model(data_path(f"sentencepiece/{name}"))
    data = write_model_proto(dataclasses.replace(vocab, normalizer=dict(vocab.normalizer, charsmap=TINY_CHARSMAP)))
    target = tmp_path / name
    run_engine_cases(name, target, target, byte_cases(data, 70, SEED + 211, header_bias=len(data)), seed=SEED + 211)


@pytest.mark.parametrize("name", ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model"])
def test_fuzz_charsmap(tmp_path, name):
    """Mutated charsmaps: a corrupt double array must not hang labkit's walk, panic tokenizers
    (a BaseException) or crash sentencepiece."""
    vocab = read_spm_model(data_path(f"sentencepiece/{name}"))
    target = tmp_path / name

    def cases():
        for label, blob in byte_cases(TINY_CHARSMAP, 80, SEED + 231, header_bias=1200):
            with_map = dataclasses.replace(vocab, normalizer=dict(vocab.normalizer, charsmap=blob))
            yield f"charsmap {label}", write_model_proto(with_map)

    run_engine_cases(f"{name} charsmap", target, target, cases(), seed=SEED + 231)


def test_fuzz_tiktoken(tmp_path):
    data = data_path("tiktoken/cl100k_base.tiktoken").read_bytes()
    small = b"\n".join(data.split(b"\n")[:700]) + b"\n"
    target = tmp_path / "small.tiktoken"
    run_engine_cases("cl100k prefix", target, target, byte_cases(small, 60, SEED + 221, header_bias=len(small)), seed=SEED + 221)


def unigram_tokenizer_json_doc(tmp_path: Path) -> dict:
    """botchan's Unigram with the tiny charsmap, exported as the tokenizer.json tokenizers writes."""
    vocab = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    path = tmp_path / "tiny_charsmap.model"
    path.write_bytes(write_model_proto(dataclasses.replace(vocab, normalizer=dict(vocab.normalizer, charsmap=TINY_CHARSMAP))))
    return json.loads(to_tokenizer_json(labkit.load(path)))  # a .model: its tokenizers conversion


@pytest.mark.parametrize("which,count", [("wordpiece", 80), ("bpe", 80), ("unigram", 80)])
def test_fuzz_tokenizer_json(tmp_path, which, count):
    doc = {"wordpiece": lambda: trimmed_minilm(300), "bpe": lambda: bpe_tokenizer_json(300),
           "unigram": lambda: unigram_tokenizer_json_doc(tmp_path)}[which]()
    folder = tmp_path / which
    folder.mkdir()
    target = folder / "tokenizer.json"
    raw = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    seed = SEED + 300 + zlib.crc32(which.encode()) % 1000
    interesting = ("model", "added_tokens", "post_processor", "normalizer", "pre_tokenizer", "decoder")
    cases = [("unmutated", raw), *json_cases(doc, count, seed, interesting_keys=interesting)]
    run_engine_cases(f"{which} tokenizer.json", target, folder, cases, seed=seed)
    run_engine_cases(f"{which} tokenizer.json bytes", target, folder, byte_cases(raw, count // 4, seed + 1, header_bias=len(raw)), seed=seed)


def test_fuzz_shipped_files_lightly(tmp_path):
    """A few mutations of the full shipped files (slow to load, so only a handful)."""
    for relative, count in [("gguf/ggml-vocab-llama-spm.gguf", 3), ("gguf/ggml-vocab-bert-bge.gguf", 3)]:
        data = data_path(relative).read_bytes()
        target = tmp_path / Path(relative).name
        cases = list(byte_cases(data, count, SEED + 401, header_bias=4096))[-count:]
        run_engine_cases(relative, target, target, cases, seed=SEED + 401)


# ----------------------------------------------------------------------------- crafted cases


def _with_added(kv: dict, *extra: tuple[str, int]) -> dict:
    """``kv`` with tokens appended (spelling, GGUF token type) after the last id."""
    new = dict(kv)
    new["tokenizer.ggml.tokens"] = list(kv["tokenizer.ggml.tokens"]) + [content for content, _ in extra]
    new["tokenizer.ggml.token_type"] = list(kv["tokenizer.ggml.token_type"]) + [ttype for _, ttype in extra]
    if "tokenizer.ggml.scores" in kv:
        new["tokenizer.ggml.scores"] = list(kv["tokenizer.ggml.scores"]) + [0.0] * len(extra)
    return new


def crafted_engine_cases():
    """(label, file name, bytes): combinations random mutation rarely makes (an empty added
    token made tiktoken's encoder loop forever inside Rust, where no signal reaches it)."""
    for name in ("gpt-2", "llama-spm"):
        kv = mini_kv(name)
        normal = kv["tokenizer.ggml.tokens"][-1]
        for label, extra in [
            ("empty control token", [("", 3)]), ("empty user-defined token", [("", 4)]),
            ("space control token", [(" ", 3)]), ("newline user-defined token", [("\n", 4)]),
            ("regex metacharacters", [("(.*)+[", 3)]), ("control token spelled like a normal one", [(normal, 3)]),
            ("10k-char control token", [("<" + "x" * 10_000 + ">", 3)]), ("one added token a prefix of another", [("<|a", 4), ("<|a|>", 3)]),
            ("the same added token twice", [("<|b|>", 3), ("<|b|>", 3)]), ("lone byte spellings", [("<0x80>", 6), ("\u0100", 4)]),
        ]:
            yield f"{name} {label}", "crafted.gguf", encode_gguf(_with_added(kv, *extra))
        yield f"{name} BOS is a byte token, added", "crafted.gguf", encode_gguf(
            dict(kv, **{"tokenizer.ggml.bos_token_id": 3 + 0x41, "tokenizer.ggml.add_bos_token": True}))
        yield f"{name} every id special", "crafted.gguf", encode_gguf(
            dict(kv, **{"tokenizer.ggml.token_type": [3] * len(kv["tokenizer.ggml.tokens"])}))
    vocab = read_spm_model(data_path("sentencepiece/botchan_en_unigram_1000.model"))
    for label, tokens, types in [
        ("user-defined piece", [*vocab.tokens[:-1], "<|x|>"], [*vocab.token_types[:-1], 4]),
        ("user-defined piece inside words", [*vocab.tokens[:-1], "ee"], [*vocab.token_types[:-1], 4]),
        ("control piece", [*vocab.tokens[:-1], "<ctl>"], [*vocab.token_types[:-1], 3]),
    ]:
        changed = dataclasses.replace(vocab, tokens=tokens, token_types=types or vocab.token_types,
                                      normalizer=dict(vocab.normalizer, charsmap=TINY_CHARSMAP))
        yield f"unigram {label}", "crafted.model", write_model_proto(changed)


def _run_crafted_cases(folder: str) -> None:
    """Child-process entry: every crafted case through every engine (asserts like the others)."""
    for label, filename, content in crafted_engine_cases():
        target = Path(folder) / filename
        run_engine_cases(label, target, target, [(label, content)], seed=SEED + 501)


def test_crafted_cases_in_a_child_process(tmp_path):
    """A loop inside Rust or C++ ignores signals, so these run in a child with a wall-clock limit."""
    code = f"import test_fuzz_engines as t; t._run_crafted_cases({str(tmp_path)!r})"
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parent, capture_output=True,
                              text=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail("a crafted case did not finish in 240 s (a loop inside a library?)")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("'served'") >= 20, done.stdout[-2000:]
