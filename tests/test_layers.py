"""The layers point one way (docs/architecture.md, "Layers"): built from the modules' syntax trees, imports inside
functions included — an import hidden in a function still makes a circle, it only moves the failure to run time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import ROOT

LAB = ROOT / "lab"

#: what each part of the lab may import of the lab (besides itself); the base modules import nothing above them
BASE = {"lab.errors", "lab.models", "lab.metrics", "lab.steps", "lab.stats", "lab.system", "lab.lock", "lab.qemu_plugin",
        "lab.config", "lab.schema", "lab.request", "lab.commandtable"}
MAY_IMPORT = {
    # backends run programs; they never import the stages, the run, the report or the commands above them
    "lab.backends": {"lab.config", "lab.errors", "lab.images", "lab.lock", "lab.qemu_plugin", "lab.system",
                     "lab.models"},
    "lab.images": {"lab.config", "lab.errors", "lab.qemu_plugin", "lab.system"},
    # the report lays out what lab/findings.py gathered and judged: it imports only the results, the models and the
    # metric table, never a judge, a stage that builds, runs or measures, or the configuration
    "lab.report": {"lab.results", "lab.models", "lab.metrics"},
}
#: the command line's entry points: only __main__ and the invoke tasks import the command line; only the command
#: line imports the commands
ENTRY = {"lab.cli": {"lab.__main__", "lab.bench.cell_walk"}, "lab.commands": {"lab.cli"}}


def _name(p: Path) -> str:
    parts = p.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in LAB.rglob("*.py")}


def _targets(mod: str, node: ast.ImportFrom | ast.Import, is_pkg: bool) -> set[str]:
    """The lab modules an import statement loads (a module's own packages excepted: they are loaded already)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.startswith("lab")]
        return {n for n in names if n in MODULES}
    if node.level:
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        pkg = ".".join(base + ([node.module] if node.module else []))
    elif node.module and node.module.split(".")[0] == "lab":
        pkg = node.module
    else:
        return set()
    found = {pkg} if pkg in MODULES else set()
    found |= {f"{pkg}.{a.name}" for a in node.names if f"{pkg}.{a.name}" in MODULES}
    parts = mod.split(".")
    return found - {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def graph() -> dict[str, set[str]]:
    out = {}
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        deps: set[str] = set()
        for node in ast.walk(tree):  # every import, at the top or inside a function
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                deps |= _targets(mod, node, path.name == "__init__.py")
        out[mod] = deps
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def _within(mod: str, part: str) -> bool:
    return mod == part or mod.startswith(part + ".")


def test_no_import_circle_counting_imports_inside_functions():
    assert cycles(graph()) == []


def test_the_detector_sees_a_circle_through_a_function_level_import():
    """The test above can fail: a lazy import that closes a circle is one."""
    g = graph()
    g["lab.stats"] = g["lab.stats"] | {"lab.report"}  # as if stats imported the report inside a function
    assert any("lab.stats" in c and "lab.report" in c for c in cycles(g))
    tree = ast.parse("def f():\n    from .pipeline import CellPipeline\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert _targets("lab.ct", node, False) == {"lab.pipeline"}


@pytest.mark.parametrize("part", sorted(MAY_IMPORT))
def test_a_part_imports_only_what_its_layer_may(part):
    g = graph()
    allowed = MAY_IMPORT[part]
    bad = sorted(f"{m} -> {d}" for m, deps in g.items() if _within(m, part) for d in deps
                 if not _within(d, part) and not any(_within(d, a) for a in allowed))
    assert bad == []


def test_the_base_imports_nothing_above_it():
    g = graph()
    bad = sorted(f"{m} -> {d}" for m in BASE for d in g[m] if d not in BASE)
    assert bad == []


@pytest.mark.parametrize("mod", sorted(ENTRY))
def test_only_the_entry_points_import_the_command_line(mod):
    g = graph()
    assert sorted(m for m, deps in g.items() if mod in deps) == sorted(ENTRY[mod])


def test_no_function_in_lab_is_over_60_lines():
    long = sorted(f"{path.relative_to(ROOT)}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
                  for path in MODULES.values() for n in ast.walk(ast.parse(path.read_text()))
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60)
    assert long == []


def test_the_findings_sit_below_the_report():
    """lab/findings.py gathers and judges what the report shows; nothing it reaches imports the report (only
    lab/publish.py joins the two), so the report's data flows one way: results -> findings -> report."""
    g = graph()
    seen, todo = set(), ["lab.findings"]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(g.get(m, ()))
    assert sorted(m for m in seen if _within(m, "lab.report")) == []
    assert sorted(m for m, deps in g.items() if "lab.findings" in deps) == ["lab.publish"]
