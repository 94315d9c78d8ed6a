"""Build stored, executed notebooks from their percent-format sources.

Each ``notebooks/src/NN_slug.py`` is a plain Python file split into cells by ``# %%`` lines
(``# %% [markdown]`` for prose, ``# %% tags=["nbval-ignore-output"]`` for cells whose output
varies, such as timings). This script turns it into ``notebooks/NN_slug.ipynb`` and executes
it top to bottom in a fresh kernel, so every stored output is generated, never typed.

Worked answers to the "Try it" exercises live apart: ``notebooks/src/solutions/NN_slug.py``
becomes ``notebooks/solutions/NN_slug.ipynb`` the same way (nbval runs those too).

Usage: python tools/make_notebook.py notebooks/src/02_bpe_byte_level.py [...]   (or --all)
"""
from __future__ import annotations

import ast
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
CELL = re.compile(r"^# %%(?P<rest>.*)$")


def parse_source(text: str) -> list:
    cells = []
    kind, tags, lines = None, [], []

    def close():
        if kind is None:
            return
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(l[2:] if l.startswith("# ") else l[1:] if l.startswith("#") else l for l in body.split("\n"))
            cells.append(nbformat.v4.new_markdown_cell(body))
        elif body.strip():
            cell = nbformat.v4.new_code_cell(body)
            if tags:
                cell.metadata["tags"] = tags
            cells.append(cell)

    for line in text.split("\n"):
        match = CELL.match(line)
        if match:
            close()
            rest = match.group("rest").strip()
            kind = "markdown" if rest.startswith("[markdown]") else "code"
            tags = []
            tag_match = re.search(r"tags\s*=\s*(\[.*\])", rest)
            if tag_match:
                tags = list(ast.literal_eval(tag_match.group(1)))
            lines = []
        elif kind is not None:
            lines.append(line)
    close()
    return cells


def build(src: Path, timeout: int = 300) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = parse_source(src.read_text(encoding="utf-8"))
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index:03d}"  # stable ids: a rebuild changes only what really changed
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    # notebooks/src/X.py -> notebooks/X.ipynb; notebooks/src/solutions/X.py -> notebooks/solutions/X.ipynb
    folder = ROOT / "notebooks" / src.parent.relative_to(ROOT / "notebooks" / "src")
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / (src.stem + ".ipynb")
    started = time.perf_counter()
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    client.execute()
    # keep the stored notebook free of run-specific metadata
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, out)
    print(f"{out.relative_to(ROOT)}: {len(nb.cells)} cells, executed in {time.perf_counter() - started:.1f} s")
    return out


def main(argv: list[str]) -> int:
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    src = ROOT / "notebooks" / "src"
    paths = sorted([*src.glob("*.py"), *src.glob("solutions/*.py")]) if argv == ["--all"] else [Path(a) for a in argv]
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        build(path.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
