"""The book as a reader sees it, checked in a real browser (Debian's chromium, driven by Playwright).

1. Starts ``make lab`` on a free port and, in JupyterLab, opens every stored notebook: its
   figures show and no widget says "Error displaying widget".
2. For each notebook with a widget: run its cells from the top through its last widget
   (the cells after it play no part in any widget), move the first widget (slider, text box
   or drop-down), and check that the output beside it changed. The longest of these runs
   goes in a second page, started while the first page walks the other stored notebooks.
3. Opens the static edition (``build/book``, built by ``make book``) with the network cut off:
   the index and two pages show their figures, and a page with a widget renders it.

Screenshots go to ``build/screenshots/``. Exits non-zero, saying what failed, on any failure.
Playwright is pointed at the chromium binary; it never downloads a browser.

Usage: python tools/browser_check.py [--only 02_bpe_byte_level ...] [--skip-lab] [--skip-book]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "screenshots"
BOOK = ROOT / "build" / "book"
TOKEN = "labkit-browser-check"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]
WIDGET = ".jp-OutputArea-output .jupyter-widgets"


def chromium_path() -> str:
    """Debian's chromium, installed with apt-get when missing (the machines run as root)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.geteuid() != 0:
        sys.exit("browser check: chromium is not installed; run `sudo apt-get install chromium`")
    print("browser check: installing Debian's chromium (apt-get) ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env, stdout=subprocess.DEVNULL)
    return shutil.which("chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stored_figures(notebook: Path) -> int:
    """How many PNG/SVG figures the stored notebook holds (what the page must show)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return sum(1 for cell in nb["cells"] for out in cell.get("outputs", [])
               if {"image/png", "image/svg+xml"} & set(out.get("data", {})))


def stored_widget_outputs(notebook: Path) -> int:
    """How many outputs of the stored notebook are widget views."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return sum("application/vnd.jupyter.widget-view+json" in out.get("data", {})
               for cell in nb["cells"] for out in cell.get("outputs", []))


def last_widget_cell(notebook: Path) -> int:
    """The index, among all cells, of the last cell whose stored output is a widget view."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return max(i for i, cell in enumerate(nb["cells"]) for out in cell.get("outputs", [])
               if "application/vnd.jupyter.widget-view+json" in out.get("data", {}))


def has_widgets(notebook: Path) -> bool:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return any("application/vnd.jupyter.widget-view+json" in out.get("data", {})
               for cell in nb["cells"] for out in cell.get("outputs", []))


class Lab:
    """``make lab`` on a free port, stopped (with its kernels) on exit."""

    def __init__(self):
        self.port = free_port()
        # expose_app_in_browser: window.jupyterapp, whose commands run cells and say when they are done
        args = (f"--no-browser --port {self.port} --ServerApp.ip=127.0.0.1 --LabApp.expose_app_in_browser=True "
                f"--IdentityProvider.token={TOKEN} --ServerApp.open_browser=False")
        self.process = subprocess.Popen(["make", "-s", "lab", f"LAB_ARGS={args}"], cwd=ROOT,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                sys.exit("browser check: make lab exited:\n" + self.process.stdout.read().decode()[-2000:])
            try:
                with urllib.request.urlopen(f"{self.url('api/status')}", timeout=5):
                    return
            except OSError:
                time.sleep(0.5)
        self.stop()
        sys.exit("browser check: JupyterLab did not answer within 180 s")

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path}{sep}token={TOKEN}"

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def open_notebook(page, lab: Lab, stem: str, workspace: str | None = None) -> None:
    """Show ``stem`` in JupyterLab: the app loads once per page (4-5 s here, in ``workspace``
    if given), later notebooks open through its own command after the previous one is closed."""
    if not page.url.startswith(lab.url("lab").split("?")[0]):
        where = f"lab/workspaces/{workspace}/tree" if workspace else "lab/tree"
        page.goto(lab.url(f"{where}/{stem}.ipynb") + "&reset", wait_until="domcontentloaded")
    else:
        page.evaluate("""async path => {
            const app = window.jupyterapp;
            for (const widget of [...app.shell.widgets('main')]) {
                if (widget.context) widget.context.model.dirty = false;  // a run left it changed: no save dialog
                widget.dispose();
            }
            const panel = await app.commands.execute('docmanager:open', {path});
            await panel.context.ready;
            await panel.revealed;
        }""", f"{stem}.ipynb")
    page.wait_for_selector(".jp-NotebookPanel:visible .jp-Cell", timeout=120_000)
    page.wait_for_timeout(1500)  # outputs, figures and saved widgets render after the cells appear


# scrolls the notebook from top to bottom, 800 px a step; after each step it waits 120 ms and
# then (up to 3 s) for the images on the page to load, and collects figures, widgets, errors
WALK_AND_COLLECT = """async p => {
    const figures = new Set(), widgets = new Set();
    let errors = 0;
    const scroller = p.querySelector('.jp-WindowedPanel-outer');
    const pause = ms => new Promise(done => setTimeout(done, ms));
    scroller.scrollTop = 0;
    for (let step = 0; step < 200; step++) {
        await pause(120);
        for (let k = 0; k < 30 && ![...p.querySelectorAll('.jp-OutputArea-output img')].every(i => i.complete); k++)
            await pause(100);
        for (const i of p.querySelectorAll('.jp-OutputArea-output img'))
            if (i.naturalWidth > 0) figures.add(i.src.length + ':' + i.src.slice(-40));
        for (const w of p.querySelectorAll('.jp-OutputArea-output .jupyter-widgets'))
            widgets.add(w.closest('.jp-Cell') ? w.closest('.jp-Cell').dataset.windowedListIndex : '?');
        errors = Math.max(errors, [...p.querySelectorAll('.jp-OutputArea-output')]
                                      .filter(o => o.textContent.includes('Error displaying widget')).length);
        if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 4) break;  // the bottom, seen
        scroller.scrollTop += 800;
    }
    return {figures: figures.size, widgets: widgets.size, errors};
}"""


def check_stored(page, lab: Lab, notebook: Path, failures: list[str]) -> None:
    """The stored notebook opens with its figures and without a widget error."""
    open_notebook(page, lab, notebook.stem)
    panel = page.locator(".jp-NotebookPanel:visible")
    wanted = stored_figures(notebook)
    # JupyterLab renders cells as they scroll into view: walk down the page (in the page itself,
    # one round trip), collecting what shows after each step once its images have loaded.
    # A walk that saw fewer figures than stored, or no widget view where some are stored, walks
    # again from the top after a pause (a slow first render: the widget manager loads after the cells)
    wants_widgets = has_widgets(notebook)
    for walks in (1, 2, 3):
        if walks > 1:
            page.wait_for_timeout(2000)
        seen = panel.evaluate(WALK_AND_COLLECT)
        if seen["figures"] >= wanted and (seen["widgets"] or not wants_widgets):
            break
    shown, widgets, errors = seen["figures"], seen["widgets"], seen["errors"]
    again = {1: "", 2: " (on the second walk)", 3: " (on the third walk)"}[walks]
    page.screenshot(path=str(SHOTS / f"{notebook.stem}-stored.png"))
    if shown < wanted:
        failures.append(f"{notebook.stem}: {shown} of {wanted} stored figures shown")
    if errors:
        failures.append(f"{notebook.stem}: 'Error displaying widget' shown {errors} time(s)")
    if wants_widgets and not widgets:
        failures.append(f"{notebook.stem}: stored widgets not rendered (is the notebook trusted?)")
    print(f"  {notebook.stem}: {shown}/{wanted} figures{again}, {widgets} widget views, {errors} widget errors", flush=True)


RUN_SECONDS = 240  # cells that have not finished by then count as a failure, not a hang


def start_run(page, cell: int) -> None:
    """Start running the open notebook's cells from the first through ``cell`` with JupyterLab's
    own commands (Run All Above, then Run Selected Cell); :func:`wait_run` waits for the end."""
    page.evaluate("""k => {
        const app = window.jupyterapp;
        const panel = app.shell.currentWidget;
        window.labkitRun = "running";
        (async () => {
            await panel.sessionContext.ready;
            panel.content.activeCellIndex = k;
            const above = await app.commands.execute('notebook:run-all-above');
            return above !== false && await app.commands.execute('notebook:run-cell') !== false ? "ran" : "error";
        })().then(outcome => { window.labkitRun = outcome; }, () => { window.labkitRun = "error"; });
    }""", cell)


def wait_run(page) -> str:
    """"ran", "error" (a cell raised) or "timeout" (not done within RUN_SECONDS)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function("() => window.labkitRun !== 'running'", timeout=RUN_SECONDS * 1000, polling=500)
    except PlaywrightTimeout:
        return "timeout"
    page.wait_for_timeout(1000)  # the outputs render after the kernel's replies
    return page.evaluate("() => window.labkitRun")


def find_widget(page, from_end: bool = False) -> bool:
    """Scroll the open notebook from the top (or the bottom) until a live widget is on the page."""
    scroller = page.locator(".jp-NotebookPanel:visible .jp-WindowedPanel-outer").first
    scroller.evaluate("e => { e.scrollTop = 0 }" if not from_end else "e => { e.scrollTop = e.scrollHeight }")
    if from_end:
        for _ in range(200):
            if page.locator(".jp-NotebookPanel:visible " + WIDGET).count():
                return True
            at_top = scroller.evaluate("e => { e.scrollTop -= 600; return e.scrollTop <= 0 }")
            page.wait_for_timeout(120)
            if at_top:
                break
        return page.locator(".jp-NotebookPanel:visible " + WIDGET).count() > 0
    for _ in range(200):
        if page.locator(".jp-NotebookPanel:visible " + WIDGET).count():
            return True
        at_end = scroller.evaluate("e => { e.scrollTop += 600; return e.scrollTop + e.clientHeight >= e.scrollHeight - 4 }")
        page.wait_for_timeout(120)
        if at_end:
            return page.locator(".jp-NotebookPanel:visible " + WIDGET).count() > 0
    return False


def move_widget(page, stem: str, last: bool = False) -> bool:
    """Move the first (or last) live widget on the page; True when the output around it changed."""
    widgets = page.locator(".jp-NotebookPanel:visible " + WIDGET)
    live = widgets.last if last else widgets.first
    live.scroll_into_view_if_needed()
    area = live.locator("xpath=ancestor::div[contains(@class,'jp-OutputArea-output')][1]")
    before = area.inner_text()
    handle = area.locator(".noUi-handle, .ui-slider-handle")
    text = area.locator(".widget-text input, .widget-textarea textarea")
    choice = area.locator(".widget-dropdown select")
    if handle.count():
        handle.first.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
    elif text.count():
        box = text.first
        box.fill(box.input_value() + " Hello world 123")
        box.press("Enter") if box.evaluate("e => e.tagName") == "INPUT" else box.evaluate("e => e.blur()")
    elif choice.count():
        options = choice.first.locator("option").all_inner_texts()
        choice.first.select_option(index=len(options) - 1)
    else:
        return False
    page.wait_for_timeout(3000)
    after = area.inner_text()
    page.screenshot(path=str(SHOTS / f"{stem}-moved{'-last' if last else ''}.png"))
    return after != before


def begin_live(page, lab: Lab, notebook: Path, workspace: str | None = None) -> None:
    """Open ``notebook`` and start running its cells through its last widget."""
    open_notebook(page, lab, notebook.stem, workspace)
    start_run(page, last_widget_cell(notebook))


def end_live(page, notebook: Path, failures: list[str]) -> None:
    """Wait for the run :func:`begin_live` started, move the widgets, then stop the kernel."""
    through = last_widget_cell(notebook)
    outcome = wait_run(page)
    if outcome != "ran":
        failures.append(f"{notebook.stem}: running cells 0-{through}: " +
                        ("stopped at an error" if outcome == "error" else f"not done within {RUN_SECONDS} s"))
    errors = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output").filter(has_text="Traceback").count()
    if tracebacks:
        failures.append(f"{notebook.stem}: a cell raised")
    if not find_widget(page):
        failures.append(f"{notebook.stem}: no live widget after running its cells")
    else:
        changed = move_widget(page, notebook.stem)
        if not changed:
            failures.append(f"{notebook.stem}: moving the widget changed nothing")
        if stored_widget_outputs(notebook) > 1:  # the last widget too (05: the lattice explorer)
            if not (find_widget(page, from_end=True) and move_widget(page, notebook.stem, last=True)):
                failures.append(f"{notebook.stem}: moving the last widget changed nothing")
        print(f"  {notebook.stem}: cells 0-{through} run, widget moved, output changed: {changed} "
              f"({errors.count()} stderr outputs)", flush=True)
    # only this notebook's kernel: another page may be running one
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")


def check_book(browser, failures: list[str]) -> None:
    """The static edition renders offline: figures load, widgets render, links resolve."""
    index = BOOK / "index.html"
    if not index.exists():
        failures.append("build/book/index.html is missing (run `make book`)")
        return
    context = browser.new_context()
    context.route("http://**/*", lambda route: route.abort())  # offline: only file:// may load
    context.route("https://**/*", lambda route: route.abort())
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
    page.goto(index.as_uri())
    links = page.locator("a[href$='.html']").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    if not links:
        failures.append("book: the index links to no page")
    page.screenshot(path=str(SHOTS / "book-index.png"))
    pages = [p for p in links if (BOOK / p).exists()]
    missing = [p for p in links if not (BOOK / p).exists()]
    if missing:
        failures.append(f"book: index links to missing pages {missing}")
    widget_pages = [p for p in pages if has_widgets(ROOT / "notebooks" / p.replace(".html", ".ipynb"))]
    figure_pages = [p for p in pages if stored_figures(ROOT / "notebooks" / p.replace(".html", ".ipynb")) > 1]
    for name in dict.fromkeys(figure_pages[:1] + widget_pages[:1]):
        page.goto((BOOK / name).as_uri())
        page.wait_for_timeout(3000)
        notebook = ROOT / "notebooks" / name.replace(".html", ".ipynb")
        loaded = page.locator("img").evaluate_all("imgs => imgs.filter(i => i.complete && i.naturalWidth > 0).length")
        wanted = stored_figures(notebook)
        if loaded < wanted:
            failures.append(f"book/{name}: {loaded} of {wanted} figures loaded")
        if has_widgets(notebook):
            rendered = page.locator(".jupyter-widgets.widget-container, .widget-slider, .widget-text, .widget-hbox, .widget-vbox").count()
            if not rendered:
                failures.append(f"book/{name}: saved widget state not rendered")
        if page.get_by_text("Error displaying widget").count():
            failures.append(f"book/{name}: 'Error displaying widget'")
        page.screenshot(path=str(SHOTS / f"book-{name.replace('.html', '')}.png"), full_page=False)
        print(f"  book/{name}: {loaded}/{wanted} figures", flush=True)
    if requests:
        failures.append(f"book: pages asked the network for {sorted(set(requests))[:5]}")
    context.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="notebook stems to check (default: all)")
    parser.add_argument("--skip-lab", action="store_true")
    parser.add_argument("--skip-book", action="store_true")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.only:
        notebooks = [nb for nb in notebooks if nb.stem in args.only]
    failures: list[str] = []
    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        if not args.skip_lab:
            lab = Lab()
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                live = [nb for nb in notebooks if has_widgets(nb)]
                # the longest run goes in a second page of its own (another workspace), started
                # once its stored view is checked (a view opened beside a running kernel shows that
                # kernel's widgets, not the saved ones): it works while this page walks the rest
                longest = max(live, key=last_widget_cell, default=None)
                background = browser.new_page(viewport={"width": 1400, "height": 1000}) if longest else None
                print("stored notebooks in JupyterLab:", flush=True)
                for notebook in sorted(notebooks, key=lambda nb: nb != longest):
                    check_stored(page, lab, notebook, failures)
                    if notebook == longest:
                        begin_live(background, lab, longest, workspace="live")
                print("live widgets (each notebook run through its last widget):", flush=True)
                for notebook in live:
                    if notebook != longest:
                        begin_live(page, lab, notebook)
                        end_live(page, notebook, failures)
                if longest:
                    end_live(background, longest, failures)
            finally:
                lab.stop()
        if not args.skip_book:
            print("static edition, offline:", flush=True)
            check_book(browser, failures)
        browser.close()
    print(f"browser check: {len(failures)} failure(s) in {time.monotonic() - started:.0f} s; "
          f"screenshots in {SHOTS.relative_to(ROOT)}")
    for failure in failures:
        print("  FAILED", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
