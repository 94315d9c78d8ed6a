"""Copy llama.cpp's Unicode tables (src/unicode-data.cpp) into data/gguf/llama_cpp_unicode.json.

llama.cpp normalises a WordPiece ("bert") GGUF's text with tables of its own, generated from
some Unicode version by its scripts/gen-unicode-data.py: a category flag per code point range,
a whitespace set, a lowercase map and a one-code-point "NFD" per range. labkit's engine for
such a file (labkit.algorithms.llama_wpm) reads the same tables, so that it normalises exactly
as llama.cpp does. Run once against the llama-cpp-python sdist:

    pip download --no-binary :all: --no-deps llama-cpp-python==0.3.36 -d /tmp/llsrc && tar xzf ...
    python tools/make_llama_cpp_unicode.py \\
        /tmp/llsrc/llama_cpp_python-0.3.36/vendor/llama.cpp/src/unicode-data.cpp data/gguf/llama_cpp_unicode.json
"""
from __future__ import annotations

import json
import re
import sys

LLAMA_CPP_COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"  # vendored by llama-cpp-python 0.3.36


def table(source: str, name: str) -> str:
    """The text between the braces of the C++ initialiser named ``name``."""
    start = source.index(name)
    body = source[source.index("{", start) + 1:]
    return body[:body.index("\n};")]


def numbers(text: str) -> list[int]:
    return [int(x, 16) for x in re.findall(r"0x([0-9A-Fa-f]+)", text)]


def main(cpp_path: str, out_path: str) -> None:
    source = open(cpp_path, encoding="utf-8").read()
    flags = numbers(table(source, "unicode_ranges_flags"))
    lowercase = numbers(table(source, "unicode_map_lowercase"))
    nfd = numbers(table(source, "unicode_ranges_nfd"))
    doc = {
        "source": f"llama.cpp {LLAMA_CPP_COMMIT} src/unicode-data.cpp (MIT), via llama-cpp-python 0.3.36",
        "flag_bits": {"number": 0x2, "letter": 0x4, "separator": 0x8, "accent_mark": 0x10, "punctuation": 0x20,
                      "symbol": 0x40, "control": 0x80},
        "ranges_flags": [flags[i:i + 2] for i in range(0, len(flags), 2)],  # start, flags (to the next start)
        "whitespace": sorted(numbers(table(source, "unicode_set_whitespace"))),
        "lowercase": [lowercase[i:i + 2] for i in range(0, len(lowercase), 2)],
        "ranges_nfd": [nfd[i:i + 3] for i in range(0, len(nfd), 3)],  # first, last, nfd
    }
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle, separators=(",", ":"))
        handle.write("\n")
    print(out_path, {k: len(v) for k, v in doc.items() if isinstance(v, list)})


if __name__ == "__main__":
    main(*sys.argv[1:3])
