"""Copy the Unicode script table of tokenizers' UnicodeScripts pre-tokenizer into
data/hf/tokenizers_unicode_scripts.json.

tokenizers splits text where the script changes with a table of its own
(tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs, generated from an older Unicode
version by SentencePiece's gen_unicode_scripts_code.pl): a code point it does not list has
no script ("Any") and never starts a piece. labkit's UnicodeScripts
(labkit.algorithms.unicode_scripts) reads the same table, so that it cuts exactly where
tokenizers does; tests/test_unicode_scripts.py measures it on every code point. Run once
against the tokenizers sdist:

    curl -sO https://files.pythonhosted.org/packages/e0/7c/2cabb2174e772636683008f2c5621949b645da7d303c596589e84516a184/tokenizers-0.23.3.tar.gz
    tar xzf tokenizers-0.23.3.tar.gz
    python tools/make_tokenizers_scripts.py \\
        tokenizers-0.23.3/tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs data/hf/tokenizers_unicode_scripts.json
"""
from __future__ import annotations

import json
import re
import sys

# one arm of get_script's match: 0x0041..=0x005A => Script::Latin, or a single code point
ARM = re.compile(r"^\s*0x([0-9A-Fa-f]+)(?:\.\.=0x([0-9A-Fa-f]+))?\s*=>\s*Script::(\w+),", re.MULTILINE)


def ranges(source: str) -> list[list]:
    """[first, last, script] per arm, neighbours of one script joined, in code point order."""
    arms = sorted((int(a, 16), int(b or a, 16), name) for a, b, name in ARM.findall(source))
    out: list[list] = []
    for first, last, name in arms:
        if out and out[-1][2] == name and out[-1][1] + 1 == first:
            out[-1][1] = last
        else:
            out.append([first, last, name])
    return out


def main(rs_path: str, out_path: str) -> None:
    source = open(rs_path, encoding="utf-8").read()
    table = ranges(source)
    doc = {
        "source": "tokenizers 0.23.3 (PyPI sdist, Apache-2.0): tokenizers/src/pre_tokenizers/unicode_scripts/scripts.rs",
        "ranges": table,  # [first, last, script]; a code point outside them is "Any"
    }
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle, separators=(",", ":"))
        handle.write("\n")
    print(out_path, len(table), "ranges,", len({name for *_, name in table}), "scripts")


if __name__ == "__main__":
    main(*sys.argv[1:3])
