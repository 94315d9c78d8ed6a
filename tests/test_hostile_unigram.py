"""Hostile Unigram inputs (issue 14): each load and encode ends in a LabkitError or a correct
result, in a child process whose memory is capped at 500 MB above its baseline and whose
CPU time is capped (so a regression fails fast instead of taking the machine down).

- a precompiled charsmap that is a DAG whose paths multiply (16,384 and 65,536 units: 2**62
  and 2**254 keys), in a .model, a t5 GGUF and a tokenizer.json;
- a charsmap declaring a trie of 0xFFFFFFFF bytes, and one whose walk leaves the array
  (tokenizers aborts the process, or panics, on these);
- a Unigram score of 1 followed by 400 zeros in tokenizer.json; Inf and NaN scores in a .model.
"""
from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
import textwrap

import pytest

from labkit.paths import data_path

MODEL = data_path("sentencepiece/botchan_en_unigram_1000.model")
ENGINES = ("labkit", "hf", "sentencepiece", None)
MEMORY_MB = 500  # above the child's baseline after its imports
CPU_SECONDS = 10  # a kill switch well above the 0.2-2 s a case takes; not a timing assertion


def dag_charsmap(units: int) -> bytes:
    """A charsmap whose trie is a ladder: from each block, bytes 'a' and 'b' lead to the same
    next block, so ``units // 256 - 2`` levels hold 2**levels keys, each replaced by 'x'."""
    levels = units // 256 - 2
    array = [0] * units
    array[0] = 256 << 10  # the root's children live in block 256
    for level in range(levels):
        base, after = 256 * (level + 1), 256 * (level + 2)
        for label in (0x61, 0x62):
            index = base ^ label
            leaf = 0x100 if level == levels - 1 else 0
            array[index] = ((index ^ after) << 10) | leaf | label
    array[256 * (levels + 1)] = 0x8000_0000  # the value unit: replacement at pool offset 0
    trie = struct.pack(f"<{units}I", *array)
    return struct.pack("<I", len(trie)) + trie + b"x\0"


def huge_trie_charsmap() -> bytes:
    """A charsmap whose header declares 0xFFFFFFFF bytes of trie."""
    return struct.pack("<I", 0xFFFF_FFFF) + b"\0" * 1024 + b"x\0"


def outside_charsmap() -> bytes:
    """A charsmap whose root points to a block past the end of its 512 units."""
    array = [0] * 512
    array[0] = 4096 << 10
    trie = struct.pack("<512I", *array)
    return struct.pack("<I", len(trie)) + trie + b"x\0"


def model_file(tmp_path, name, charsmap=None, scores=None) -> str:
    """The botchan .model with its charsmap or some scores replaced (written by labkit's writer)."""
    from labkit.formats.spm_model import read_spm_model, write_model_proto

    vocab = read_spm_model(MODEL)
    if charsmap is not None:
        vocab.normalizer["charsmap"] = charsmap
    if scores:
        vocab.scores = [scores.get(i, s) for i, s in enumerate(vocab.scores)]
    path = tmp_path / f"{name}.model"
    path.write_bytes(write_model_proto(vocab))
    return str(path)


def gguf_file(tmp_path, name, charsmap) -> str:
    """A t5 GGUF of the botchan vocabulary carrying ``charsmap`` (as GGUF stores it: u8 array)."""
    from labkit.formats.spm_model import read_spm_model

    vocab = read_spm_model(MODEL)

    def string(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw

    items = [
        ("tokenizer.ggml.model", 8, string("t5")),
        ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(vocab.tokens)) + b"".join(string(t) for t in vocab.tokens)),
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, len(vocab.scores)) + struct.pack(f"<{len(vocab.scores)}f", *vocab.scores)),
        ("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, len(vocab.token_types)) + struct.pack(f"<{len(vocab.token_types)}i", *vocab.token_types)),
        ("tokenizer.ggml.unknown_token_id", 4, struct.pack("<I", 0)),
        # the botchan model's own flags, as a converter writes them (llama.cpp: off when absent)
        ("tokenizer.ggml.add_space_prefix", 7, struct.pack("<?", True)),
        ("tokenizer.ggml.remove_extra_whitespaces", 7, struct.pack("<?", True)),
        ("tokenizer.ggml.precompiled_charsmap", 9, struct.pack("<IQ", 0, len(charsmap)) + charsmap),
    ]
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 0, len(items)))
    for key, kind, payload in items:
        out += string(key) + struct.pack("<I", kind) + payload
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(bytes(out))
    return str(path)


def tokenizer_json_file(tmp_path, name, charsmap=None, score_literal=None) -> str:
    from labkit.formats.spm_model import read_spm_model

    vocab = read_spm_model(MODEL)
    charsmap = vocab.normalizer["charsmap"] if charsmap is None else charsmap
    doc = {
        "version": "1.0", "added_tokens": [],
        "normalizer": {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                  "vocab": [[t, s] for t, s in zip(vocab.tokens, vocab.scores)]},
    }
    text = json.dumps(doc, ensure_ascii=False)
    if score_literal is not None:
        # the score of piece 5, spelled as a JSON number no float holds
        text = text.replace(json.dumps([vocab.tokens[5], vocab.scores[5]], ensure_ascii=False),
                            f"[{json.dumps(vocab.tokens[5], ensure_ascii=False)}, {score_literal}]", 1)
        assert score_literal in text
    path = tmp_path / f"{name}.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


CHILD = textwrap.dedent('''
    import json, resource, sys, time
    import labkit
    import sentencepiece, tokenizers  # imported before the cap: only the case is measured

    def vm_bytes():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

    resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + {memory} * 2**20,) * 2)
    used = resource.getrusage(resource.RUSAGE_SELF)
    resource.setrlimit(resource.RLIMIT_CPU, (int(used.ru_utime + used.ru_stime) + {cpu},) * 2)
    path, engine, text = sys.argv[1], (None if sys.argv[2] == "None" else sys.argv[2]), sys.argv[3]
    started = time.process_time()
    try:
        tok = labkit.load(path, engine=engine)
        result = {{"ids": tok.encode(text, parse_special=False).ids, "engine": tok.engine}}
    except labkit.LabkitError as exc:
        result = {{"error": type(exc).__name__, "message": str(exc)[:300]}}
    result["cpu"] = time.process_time() - started
    print(json.dumps(result))
''').format(memory=MEMORY_MB, cpu=CPU_SECONDS)


def run_capped(path: str, engine, text: str) -> dict:
    """Load ``path`` with ``engine`` and encode ``text`` in a capped child: its JSON report."""
    done = subprocess.run([sys.executable, "-c", CHILD, path, str(engine), text], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"child died ({done.returncode}): {done.stderr[-800:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # no timed assertion: RLIMIT_CPU (CPU_SECONDS) kills a case that runs away; the CPU time is shown
    print(f"{engine}: {report['cpu']:.2f} s CPU")
    return report


TEXT = "ab" * 40 + " Hello world"


@pytest.mark.parametrize("units", [16_384, 65_536])
def test_dag_charsmap_in_a_model_is_served_exactly(tmp_path, units):
    path = model_file(tmp_path, f"dag{units}", charsmap=dag_charsmap(units))
    reference = run_capped(path, "sentencepiece", TEXT)
    assert "ids" in reference, reference
    assert run_capped(path, "labkit", TEXT)["ids"] == reference["ids"]
    assert run_capped(path, None, TEXT)["ids"] == reference["ids"]
    # the hf engine refuses a .model (tokenizers' Precompiled, among others, reads it differently)
    report = run_capped(path, "hf", TEXT)
    assert report.get("error") == "EngineUnavailable", report


@pytest.mark.parametrize("units", [16_384, 65_536])
def test_dag_charsmap_in_gguf_and_tokenizer_json(tmp_path, units):
    blob = dag_charsmap(units)
    # a GGUF: llama.cpp replaces the longest key over the text, as sentencepiece does (62 chars here)
    path = gguf_file(tmp_path, f"dag{units}", blob)
    reference = run_capped(model_file(tmp_path, f"dag{units}", charsmap=blob), "sentencepiece", TEXT)
    for engine in ("labkit", None):
        assert run_capped(path, engine, TEXT)["ids"] == reference["ids"], engine
    for engine in ("hf", "sentencepiece"):  # the sentencepiece engine refuses every t5 GGUF
        assert run_capped(path, engine, TEXT).get("error") == "EngineUnavailable", engine
    # a tokenizer.json: tokenizers is the reference (it matches inside one grapheme cluster)
    path = tokenizer_json_file(tmp_path, f"dag{units}", blob)
    reference = run_capped(path, "hf", TEXT)
    for engine in ("labkit", None):
        assert run_capped(path, engine, TEXT)["ids"] == reference["ids"], engine


def test_entries_of_a_dag_charsmap_is_refused_quickly():
    from labkit.algorithms.charsmap import CharsMap
    from labkit.core import LabkitError

    cmap = CharsMap(dag_charsmap(16_384))
    with pytest.raises(LabkitError, match="paths multiply"):
        list(cmap.entries())
    assert cmap.longest_match(b"ab" * 40).length == 62  # the walk itself is bounded by the text


@pytest.mark.parametrize("make", [huge_trie_charsmap, outside_charsmap])
def test_corrupt_charsmap_never_reaches_an_engine(tmp_path, make):
    blob = make()
    paths = [model_file(tmp_path, make.__name__, charsmap=blob), gguf_file(tmp_path, make.__name__, blob),
             tokenizer_json_file(tmp_path, make.__name__, blob)]
    for path in paths:
        for engine in ENGINES:
            report = run_capped(path, engine, TEXT)
            assert report.get("error") == "FormatError" and "charsmap" in report["message"], (path, engine, report)


def test_score_too_large_for_a_float(tmp_path):
    path = tokenizer_json_file(tmp_path, "huge_score", score_literal="1" + "0" * 400)
    for engine in ENGINES:
        report = run_capped(path, engine, TEXT)
        assert "ids" in report or report.get("error"), (engine, report)
    labkit_report = run_capped(path, "labkit", TEXT)
    assert labkit_report.get("error") and "score" in labkit_report["message"], labkit_report


@pytest.mark.parametrize("score", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_scores_in_a_model_are_refused(tmp_path, score):
    path = model_file(tmp_path, "bad_score", scores={5: score})
    report = run_capped(path, "labkit", TEXT)
    # refused by the reader (or, for a vocabulary built some other way, by UnigramModel)
    assert report.get("error") and "score" in report["message"] and "5" in report["message"], report
    for engine in ("hf", "sentencepiece", None):
        report = run_capped(path, engine, TEXT)
        assert "ids" in report or report.get("error"), (engine, report)


def test_charsmap_tokenizers_cannot_parse_is_refused_in_tokenizer_json(tmp_path):
    # a pool that is not UTF-8: sentencepiece reads bytes, tokenizers panics (a BaseException) on it
    from labkit.formats.spm_model import read_spm_model

    blob = read_spm_model(MODEL).normalizer["charsmap"] + b"\xff"
    path = tokenizer_json_file(tmp_path, "pool_not_utf8", blob)
    for engine in ("labkit", "hf", None):
        report = run_capped(path, engine, TEXT)
        assert report.get("error") == "FormatError" and "precompiled_charsmap" in report["message"], (engine, report)


def test_charsmap_in_non_canonical_base64_is_refused(tmp_path):
    # Python's decoder forgives set bits after the last byte ('AAB=' reads as 'AAA='); tokenizers does not
    from labkit.formats.spm_model import read_spm_model

    blob = read_spm_model(MODEL).normalizer["charsmap"] + b"\0"
    canonical = base64.b64encode(blob).decode()
    assert canonical.endswith("AA=")
    loose = canonical[:-2] + "B="
    assert base64.b64decode(loose, validate=True) == blob
    path = tokenizer_json_file(tmp_path, "loose_base64", blob)
    text = open(path, encoding="utf-8").read()
    with open(path, "w", encoding="utf-8") as out:
        out.write(text.replace(canonical, loose))
    for engine in ("labkit", "hf", None):
        report = run_capped(path, engine, TEXT)
        assert report.get("error") == "FormatError" and "not canonical base64" in report["message"], (engine, report)


def test_real_charsmap_in_a_t5_gguf_is_served_exactly_or_refused(tmp_path):
    # nmt_nfkc's keys mostly span several grapheme clusters: labkit matches them as llama.cpp (and
    # sentencepiece on the .model) does, the hf engine refuses the file rather than normalise differently,
    # and the sentencepiece engine refuses every t5 GGUF (llama.cpp's t5 loop is its own)
    from labkit.formats.spm_model import read_spm_model

    path = gguf_file(tmp_path, "t5_nmt_nfkc", read_spm_model(MODEL).normalizer["charsmap"])
    text = "x \u1100\u1161\u3133 y " + TEXT
    reference = run_capped(MODEL, "sentencepiece", text)
    for engine in ("labkit", None):
        assert run_capped(path, engine, text)["ids"] == reference["ids"], engine
    report = run_capped(path, "sentencepiece", text)
    assert report.get("error") == "EngineUnavailable" and "engine='labkit'" in report["message"], report
    report = run_capped(path, "hf", text)
    assert report.get("error") == "EngineUnavailable" and "Precompiled normaliser" in report["message"], report
