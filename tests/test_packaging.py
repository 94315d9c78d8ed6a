"""The project's own plumbing: environment.yml in step with pyproject.toml, the two
commands in the README, CI calling make test."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _normalise(requirement: str) -> str:
    name, spec = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", requirement).groups()
    return re.sub(r"[-_.]+", "-", name).lower() + spec.replace(" ", "")


def _pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return {_normalise(r) for r in reqs}


def _environment_requirements() -> set[str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    reqs = set()
    for line in lines[start + 1 :]:
        stripped = line.strip()
        if not stripped.startswith("- "):
            if stripped.startswith("#") or not stripped:
                continue
            break
        item = stripped[2:].strip()
        if item.startswith("-e"):
            continue
        reqs.add(_normalise(item))
    return reqs


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    assert _environment_requirements() == _pyproject_requirements()


def test_environment_yml_pins_the_python_pyproject_allows():
    python = re.search(r"-\s*python=(\d+\.\d+)", (ROOT / "environment.yml").read_text()).group(1)
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    low = re.search(r">=\s*(\d+\.\d+)", requires).group(1)
    assert tuple(map(int, python.split("."))) >= tuple(map(int, low.split(".")))


def test_readme_shows_both_commands_first():
    readme = (ROOT / "README.md").read_text()
    first_block = readme[: readme.index("##", readme.index("make test"))] if "##" in readme else readme
    assert "make lab" in first_block and "make test" in first_block


def test_ci_runs_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_every_notebook_has_a_source_and_is_stored_executed():
    import json

    stored = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    sources = sorted(p.stem for p in (ROOT / "notebooks" / "src").glob("*.py"))
    assert stored == sources
    for stem in stored:
        nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
        counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
        assert counts and None not in counts, f"{stem}: has unexecuted cells"
        assert counts == sorted(counts), f"{stem}: executed out of order"
        first = "".join(next(c for c in nb["cells"] if c["cell_type"] == "code")["source"])
        assert "import labkit" in first and "__version__" in first, f"{stem}: first cell must import labkit"


def test_nothing_links_outside_the_repository():
    # a clone has only this repository: the README, the package and the notebooks must stand alone
    places = [ROOT / "README.md", *(ROOT / "labkit").rglob("*.py"), *(ROOT / "notebooks").rglob("*.py"),
              *(ROOT / "notebooks").rglob("*.ipynb")]
    outside = "/".join(("..", "shared"))  # spelled in parts so this file does not name it itself
    offenders = [str(p.relative_to(ROOT)) for p in places if outside in p.read_text(encoding="utf-8")]
    assert not offenders


def test_every_make_command_in_the_readme_is_a_target():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+(?: [\w-]+)*):", makefile, flags=re.M))
    targets = {t for group in targets for t in group.split()}
    asked = set(re.findall(r"`(?:PYTHON=\S+ )?make ([\w-]+)", readme))
    assert asked and asked <= targets, asked - targets
