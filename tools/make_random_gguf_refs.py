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

A case with a ``family`` (``"spm"``: ``labkit.conformance.random_gguf_spm``, written with
``--family spm --write``) is answered in a child process, because llama.cpp ends the process
on some of those files' texts (a character with no token and no byte token: an uncaught C++
exception); such an answer is stored as ``"abort"``. For each text: ``llama_tokenize`` without
and with parse_special, each with add_special off and on; for each id list
``llama_detokenize`` with unparse_special on and off (remove_special off); a byte-level family
(``dna``) decodes as the byte files do, token_to_piece joined:

    .venv/bin/python -m labkit.conformance.random_gguf --family spm --seeds 0:120 --write /tmp/random-spm
    /tmp/llv/bin/python tools/make_random_gguf_refs.py /tmp/random-spm/cases.json data/gguf/random_llama_cpp_spm.json

The other families (``wpm``, ``ugm``, ``utf8``) are written and answered the same way, e.g.

    .venv/bin/python -m labkit.conformance.random_gguf --family utf8 --seeds 0:150 --write /tmp/random-utf8
    /tmp/llv/bin/python tools/make_random_gguf_refs.py /tmp/random-utf8/cases.json data/gguf/random_llama_cpp_utf8.json
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal
import sys

os.environ.setdefault("GGML_NO_BACKTRACE", "1")  # else each abort waits for gdb to print a backtrace
import llama_cpp  # noqa: E402
from llama_cpp import Llama  # noqa: E402

LLAMA_CPP_COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"  # vendored by llama-cpp-python 0.3.36
# byte-level families: id lists decoded as the byte files' are (token_to_piece joined, as llama.cpp's
# server /detokenize does; llama_detokenize also drops a space before '?!.,' there)
PIECES_FAMILIES = ("dna",)


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


ABORT = "abort"  # llama.cpp ended the process on this input
JOB_SECONDS = 30  # a job still running after this is ended and stored as ABORT


def detokenized(vocab, ids: list[int], unparse_special: bool) -> str:
    """llama_detokenize (remove_special off) with a buffer large enough for the text."""
    array = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
    size = 1 << 16
    while True:
        buffer = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_detokenize(vocab, array, len(ids), buffer, size, False, unparse_special)
        if n >= 0:
            return buffer.raw[:n].decode("utf-8", "replace")
        size = -n + 1


def _jobs(case: dict) -> list[tuple]:
    return ([("tokenize", t, add, parse) for add in (False, True) for parse in (False, True) for t in case["texts"]]
            + [("detokenize", ids, unparse) for unparse in (True, False) for ids in case["id_lists"]])


def _child(case: dict, jobs: list[tuple], start: int, write_fd: int) -> None:
    """Answer jobs[start:] one JSON line each; llama.cpp may end this process at any of them."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a loop that fills memory ends here, not the machine
    out = os.fdopen(write_fd, "w", encoding="utf-8")
    try:
        llm = Llama(model_path=case["path"], vocab_only=True, verbose=False)
    except ValueError as exc:
        out.write(json.dumps({"refused": str(exc).replace(case["path"], "<file>")}) + "\n")
        out.flush()
        os._exit(0)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    for job in jobs[start:]:
        signal.alarm(JOB_SECONDS)  # a job that never ends (llama.cpp can loop forever) ends this process
        if job[0] == "tokenize":
            _, text, add, parse = job
            answer = " ".join(map(str, llm.tokenize(text.encode("utf-8"), add_bos=add, special=parse)))
        elif case["family"] in PIECES_FAMILIES:
            answer = compact(pieces(vocab, job[1], job[2]))
        else:
            answer = compact(detokenized(vocab, job[1], job[2]))
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
        out.flush()
    os._exit(0)


def family_answers(case: dict) -> dict:
    """The answers for a family case, each job in a child process that llama.cpp may end."""
    entry = {"seed": case["seed"], "sha256": case["sha256"], "inputs_sha256": case["inputs_sha256"]}
    jobs, results = _jobs(case), []
    while len(results) < len(jobs):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)  # llama.cpp's "terminate called ..." goes nowhere
            _child(case, jobs, len(results), write_fd)
        os.close(write_fd)
        with os.fdopen(read_fd, encoding="utf-8") as lines:
            for line in lines:
                answer = json.loads(line)
                if isinstance(answer, dict):
                    entry["refused"] = answer["refused"]
                    os.waitpid(pid, 0)
                    return entry
                results.append(answer)
        os.waitpid(pid, 0)
        if len(results) < len(jobs):
            results.append(ABORT)  # the child died on this job
    n = len(case["texts"])
    plain, special, bos_plain, bos_special = (results[k * n:(k + 1) * n] for k in range(4))
    keep, skip = results[4 * n:4 * n + len(case["id_lists"])], results[4 * n + len(case["id_lists"]):]
    entry["plain"] = plain
    entry["special"] = [s if s != p else None for s, p in zip(special, plain)]  # None: as without parse_special
    entry["bos_plain"] = [b if b != p else None for b, p in zip(bos_plain, plain)]  # None: as with add_special off
    entry["bos_special"] = [b if b != s else None for b, s in zip(bos_special, special)]
    entry["keep"] = keep
    entry["skip"] = [s if s != k else None for s, k in zip(skip, keep)]  # None: as with unparse_special on
    return entry


def main(cases_path: str, out_path: str) -> None:
    cases = json.load(open(cases_path, encoding="utf-8"))
    stored = {"llama_cpp_python": llama_cpp.__version__, "llama_cpp_commit": LLAMA_CPP_COMMIT,
              "seeds": [family_answers(case) if case.get("family") else answers(case) for case in cases]}
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(stored, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")
    served = sum("refused" not in entry for entry in stored["seeds"])
    print(f"{out_path}: {len(cases)} files, {served} loaded by llama.cpp")


if __name__ == "__main__":
    main(*sys.argv[1:3])
