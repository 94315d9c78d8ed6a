"""Ask llama.cpp what it makes of the random GGUF files of labkit.conformance.random_gguf.

llama-cpp-python cannot be installed beside labkit's pins, so this runs in a venv of its own
(it builds llama.cpp from the sdist: about 5 minutes on 2 cores):

    python3 -m venv /tmp/llv
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_OPENMP=OFF" \\
        /tmp/llv/bin/pip install llama-cpp-python==0.3.36
    .venv/bin/python -m labkit.conformance.random_gguf --seeds 0:150 --write /tmp/random-gguf
    /tmp/llv/bin/python tools/make_random_gguf_refs.py /tmp/random-gguf/cases.json data/gguf/random_llama_cpp.json

For each file: whether llama.cpp loads it (vocab only), the ids of ``llama_tokenize`` without
and with parse_special (add_special off), and per id list the concatenated
``llama_token_to_piece`` with special on and off (a buffer large enough for any piece: the
binding's own ``detokenize`` drops pieces over 32 bytes).
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import sys

import llama_cpp
from llama_cpp import Llama

LLAMA_CPP_COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"  # vendored by llama-cpp-python 0.3.36


def pieces(vocab, ids: list[int], special: bool) -> str:
    out = b""
    buffer = ctypes.create_string_buffer(1 << 16)
    for token in ids:
        size = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, special)
        if size < 0:
            raise RuntimeError(f"piece of {token} longer than {len(buffer)} bytes")
        out += buffer.raw[:size]
    return out.decode("utf-8", "replace")


def compact(text: str) -> str:
    """A decoded text as stored: itself, or past 200 characters its sha256 (as labkit compares it)."""
    return text if len(text) <= 200 else "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def answers(case: dict) -> dict:
    entry = {"seed": case["seed"], "sha256": case["sha256"], "inputs_sha256": case["inputs_sha256"]}
    try:
        llm = Llama(model_path=case["path"], vocab_only=True, verbose=False)
    except ValueError as exc:
        entry["refused"] = str(exc).replace(case["path"], "<file>")
        return entry
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    plain = [" ".join(map(str, llm.tokenize(t.encode("utf-8"), add_bos=False, special=False))) for t in case["texts"]]
    special = [" ".join(map(str, llm.tokenize(t.encode("utf-8"), add_bos=False, special=True))) for t in case["texts"]]
    entry["plain"] = plain
    entry["special"] = [s if s != p else None for s, p in zip(special, plain)]  # None: as without parse_special
    keep = [compact(pieces(vocab, ids, True)) for ids in case["id_lists"]]
    skip = [compact(pieces(vocab, ids, False)) for ids in case["id_lists"]]
    entry["keep"] = keep
    entry["skip"] = [s if s != k else None for s, k in zip(skip, keep)]  # None: as with special on
    return entry


def main(cases_path: str, out_path: str) -> None:
    cases = json.load(open(cases_path, encoding="utf-8"))
    stored = {"llama_cpp_python": llama_cpp.__version__, "llama_cpp_commit": LLAMA_CPP_COMMIT,
              "seeds": [answers(case) for case in cases]}
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(stored, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")
    served = sum("refused" not in entry for entry in stored["seeds"])
    print(f"{out_path}: {len(cases)} files, {served} loaded by llama.cpp")


if __name__ == "__main__":
    main(*sys.argv[1:3])
