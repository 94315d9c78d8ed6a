"""The import graph of ``labkit/``, built with ``ast``, against the layer table in the README:
no import runs up the table or sideways between peers, and no import cycle exists."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "labkit"
# the one import that runs up, made inside the method that needs it (documented in core.py
# and in the README's architecture section)
ALLOWED_UPWARD = {("labkit.core", "labkit.chat.encode")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def facade_names() -> dict[str, str]:
    """Names ``labkit/__init__.py`` offers -> the module that defines each."""
    tree = ast.parse(MODULES["labkit"].read_text(encoding="utf-8"))
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("labkit."):
            for alias in node.names:
                names[alias.asname or alias.name] = node.module
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_LAZY" for t in node.targets):
            names.update(ast.literal_eval(node.value))
    return names


FACADE = facade_names()


def resolve(name: str, attribute: str | None = None) -> str | None:
    """The labkit module an import (``from name import attribute``) depends on."""
    if attribute is not None and f"{name}.{attribute}" in MODULES:
        return f"{name}.{attribute}"  # a submodule
    if name == "labkit" and attribute is not None:
        return FACADE.get(attribute, "labkit")
    return name if name in MODULES else None


def imports_of(module: str) -> set[str]:
    """Every labkit module ``module`` imports, at the top or inside a function."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = set()
    whole_facade = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "labkit":
            for alias in node.names:
                target = resolve(node.module, alias.name)
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            pytest.fail(f"{module}: relative import; write the absolute labkit.* name")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "labkit" and alias.asname is None:
                    whole_facade = True
                elif alias.name.startswith("labkit."):
                    target = resolve(alias.name)
                    if target:
                        found.add(target)
    if whole_facade:  # `import labkit; labkit.load(...)`: depends on what labkit.X names
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "labkit":
                found.add(resolve("labkit", node.attr))
    found.discard(module)
    return found


@functools.lru_cache(maxsize=1)
def import_graph() -> dict[str, set[str]]:
    """Module -> the labkit modules it imports (built on first use: collecting this file in
    every test worker should not parse the whole package)."""
    return {module: imports_of(module) for module in MODULES}


def readme_layers() -> dict[str, int]:
    """The README's architecture table: ``labkit/x/`` or ``labkit/x.py`` -> layer number."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    layers = {}
    for number, cell in re.findall(r"^\| (\d+) \| ([^|]+) \|", section, re.M):
        for unit in re.findall(r"`labkit/([\w./]+)`", cell):
            layers[unit.removesuffix(".py").rstrip("/").replace("/", ".")] = int(number)
    return layers


LAYERS = readme_layers()


def unit_of(module: str) -> str:
    """``labkit.formats.gguf`` -> ``formats``; ``labkit.core`` -> ``core``; ``labkit`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_readme_names_every_folder_and_module():
    units = {unit_of(m) for m in MODULES}
    missing = sorted(units - set(LAYERS))
    assert not missing, f"add these to the README's architecture table: {missing}"
    assert len(LAYERS) >= 10


def test_no_import_runs_up_or_sideways():
    wrong = []
    for module, targets in import_graph().items():
        for target in targets:
            here, there = unit_of(module), unit_of(target)
            if here == there or (module, target) in ALLOWED_UPWARD:
                continue
            if LAYERS[there] >= LAYERS[here]:
                wrong.append(f"{module} (layer {LAYERS[here]}) imports {target} (layer {LAYERS[there]})")
    assert not wrong, "\n".join(sorted(wrong))


def test_engines_are_reached_through_the_factory():
    # above the factory, code builds engines with labkit.load / factory.build_engine, never by module
    wrong = [f"{m} imports {t}" for m, targets in import_graph().items() for t in targets
             if unit_of(t) == "engines" and LAYERS[unit_of(m)] > LAYERS["factory"]]
    assert not wrong, "\n".join(sorted(wrong))


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycles():
    graph = {m: {t for t in targets if (m, t) not in ALLOWED_UPWARD} for m, targets in import_graph().items()}
    assert find_cycles(graph) == []


def test_the_checks_can_fail():
    # a made-up graph with a cycle and an upward import is caught
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert LAYERS["core"] < LAYERS["formats"] < LAYERS["engines"] < LAYERS["factory"] < LAYERS["chat"]
    assert "labkit.chat.encode" in import_graph()["labkit.core"]  # the documented exception is seen, then allowed
    assert "labkit.formats.hf_config" in import_graph()["labkit.formats.detect"]


def test_core_imports_chat_only_inside_apply_chat_template():
    tree = ast.parse(MODULES["labkit.core"].read_text(encoding="utf-8"))
    places = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labkit.chat"):
                    places.append(function.name)
    top_level = [n for n in tree.body if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("labkit.chat")]
    assert places == ["apply_chat_template"] and top_level == []
