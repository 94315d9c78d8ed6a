"""Ask llama.cpp how it tokenizes the probe texts under every split name (labkit.conformance.pre_probe).

Runs in llama-cpp-python's own venv (see tools/make_random_gguf_refs.py for building it):

    .venv/bin/python -m labkit.conformance.pre_probe --write /tmp/pre-probe
    /tmp/llv/bin/python tools/make_pre_type_refs.py /tmp/pre-probe/cases.json data/gguf/pre_types_llama_cpp.json

Each file is read in a child process: llama.cpp aborts the process (a failed GGML_ASSERT) on
some names, e.g. "whitespace" over a byte-level vocabulary, and that is recorded as such.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

LLAMA_CPP_COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"  # vendored by llama-cpp-python 0.3.36


def digest(ids) -> str:
    return hashlib.sha256(" ".join(map(str, ids)).encode()).hexdigest()[:12]  # as pre_probe.ids_digest


def one(path: str, texts_path: str) -> None:
    """In the child: every text's digest, or why llama.cpp would not load the file."""
    from llama_cpp import Llama

    texts = json.load(open(texts_path, encoding="utf-8"))["texts"]
    try:
        llm = Llama(model_path=path, vocab_only=True, verbose=False)
    except ValueError as exc:
        print("RESULT " + json.dumps({"refused": str(exc).replace(path, "<file>")}))
        return
    print("RESULT " + json.dumps({"digests": [digest(llm.tokenize(t.encode("utf-8"), add_bos=False, special=False))
                                              for t in texts]}))


def main(cases_path: str, out_path: str) -> None:
    import llama_cpp

    stored = json.load(open(cases_path, encoding="utf-8"))
    names = {}
    for case in stored["cases"]:
        run = subprocess.run([sys.executable, __file__, "--one", case["path"], cases_path], capture_output=True, text=True)
        lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
        entry = json.loads(lines[-1][len("RESULT "):]) if lines else {"crashed": f"exit status {run.returncode}"}
        names[case["name"]] = {"sha256": case["sha256"], **entry}
    out = {"llama_cpp_python": llama_cpp.__version__, "llama_cpp_commit": LLAMA_CPP_COMMIT, "texts": stored["texts"],
           "names": names}
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(out, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")
    served = sum("digests" in entry for entry in names.values())
    print(f"{out_path}: {len(names)} names, {served} served by llama.cpp")


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        one(sys.argv[2], sys.argv[3])
    else:
        main(*sys.argv[1:3])
