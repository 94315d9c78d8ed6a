"""Build the static edition of the book: ``build/book/`` with one HTML page per notebook.

Each page holds the notebook's stored outputs and figures exactly as committed (nothing is
re-executed), links between notebooks point at the other pages, and saved widget state is
rendered by the Jupyter widgets HTML manager bundled into ``build/book/_static/`` (taken
from the npm registry's packages by ``npm pack``; the pages load nothing from a CDN, so the
book reads offline). ``index.html`` holds the table of contents from the README.

Usage: python tools/make_book.py [--out build/book]
"""
from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parent.parent
# the widget manager and loader the pages use, pinned (packages of the npm registry)
JS_PACKAGES = {"@jupyter-widgets/html-manager": "1.0.15", "requirejs": "2.3.8"}
TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{#- nothing from a CDN: no MathJax, no mermaid; the book has neither -#}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""
NAV = '<nav class="labkit-nav" style="padding:.5em 1em;font-family:sans-serif">{links}</nav>\n'

NOTEBOOK_LINK = re.compile(r'href="(?:\./)?(\d\d_[\w-]+)\.ipynb(#[^"]*)?"')


def fetch_js(static: Path) -> None:
    """Unpack the pinned npm packages' browser files into ``static`` (once; kept between builds)."""
    wanted = {static / "embed-amd.js", static / "require.js"}
    if all(p.exists() for p in wanted):
        return
    static.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        specs = [f"{name}@{version}" for name, version in JS_PACKAGES.items()]
        subprocess.run(["npm", "pack", "--silent", *specs], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        for archive in Path(tmp).glob("*.tgz"):
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    name = member.name.removeprefix("package/")
                    # embed-amd.js and the fonts/images it loads beside itself; require.js
                    if (name.startswith("dist/") and not name.endswith(".map")) or name == "require.js":
                        member.name = Path(name).name
                        tar.extract(member, static, filter="data")


def contents_table() -> list[tuple[str, str, str]]:
    """(number, slug, what it teaches) for each row of the README's notebook table."""
    rows = []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\|\s*(\d\d)\s*\|\s*([\w-]+)\s*\|\s*(.+?)\s*\|\s*$", line)
        if match:
            rows.append(match.groups())
    return rows


def page_name(notebook: Path) -> str:
    return notebook.stem + ".html"


def navigation(before: Path | None, after: Path | None) -> str:
    """Links to the previous page, the contents and the next page."""
    links = [f'<a href="{page_name(before)}">&larr; {before.stem}</a>'] if before else []
    links.append('<a href="index.html">contents</a>')
    links += [f'<a href="{page_name(after)}">{after.stem} &rarr;</a>'] if after else []
    return NAV.format(links=" | ".join(links))


def build_page(exporter: HTMLExporter, notebook: Path, out: Path, nav: str) -> Path:
    nb = nbformat.read(notebook, as_version=4)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": notebook.stem}})
    body = NOTEBOOK_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)
    body = body.replace("<main>", "<main>\n" + nav, 1).replace("</main>", nav + "</main>", 1)
    target = out / page_name(notebook)
    target.write_text(body, encoding="utf-8")
    return target


def build_index(out: Path, notebooks: list[Path]) -> Path:
    known = {nb.stem: nb for nb in notebooks}
    items = []
    for number, slug, teaches in contents_table():
        stem = f"{number}_{slug}"
        if stem in known:
            items.append(f'<tr><td>{number}</td><td><a href="{stem}.html">{html.escape(slug)}</a></td>'
                         f"<td>{html.escape(teaches.replace('`', ''))}</td></tr>")
    missing = sorted(set(known) - {f"{n}_{s}" for n, s, _ in contents_table()})
    for stem in missing:  # a notebook the README does not list yet still gets a link
        items.append(f'<tr><td>{stem[:2]}</td><td><a href="{stem}.html">{html.escape(stem[3:])}</a></td><td></td></tr>')
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>labkit: a lab book about LLM tokenizers</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.5}}
td{{padding:.2em .8em;vertical-align:top}}</style></head>
<body><h1>labkit: a lab book about LLM tokenizers</h1>
<p>The static edition: every notebook with its stored outputs and figures. To run the cells,
clone the repository and run <code>make lab</code>.</p>
<table><thead><tr><th>#</th><th>notebook</th><th>teaches</th></tr></thead><tbody>
{chr(10).join(items)}
</tbody></table></body></html>
"""
    target = out / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "book"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fetch_js(out / "_static")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "book.html.j2").write_text(TEMPLATE, encoding="utf-8")
        exporter = HTMLExporter(template_name="lab", template_file=str(Path(tmp) / "book.html.j2"))
        exporter.require_js_url = "_static/require.js"
        exporter.widget_renderer_url = "_static/embed-amd.js"
        notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        for k, notebook in enumerate(notebooks):
            before = notebooks[k - 1] if k else None
            after = notebooks[k + 1] if k + 1 < len(notebooks) else None
            build_page(exporter, notebook, out, navigation(before, after))
    build_index(out, notebooks)
    print(f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: index.html and {len(notebooks)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
