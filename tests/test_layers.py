"""The package's imports run one way: io -> checks / stages / models -> pipeline -> engines / report ->
api / review -> cli. Every import counts, also the lazy ones inside functions, and there is no import
cycle between modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "pairaudit"

# lowest first; a module may import its own layer and the ones below it
LAYERS: list[tuple[str, ...]] = [
    ("pairaudit", "pairaudit.exit_codes", "pairaudit.errors", "pairaudit.datatypes", "pairaudit.config",
     "pairaudit.hashing"),
    ("pairaudit.io", "pairaudit.outputs"),
    ("pairaudit.models", "pairaudit.trainer", "pairaudit.checks", "pairaudit.stages"),
    ("pairaudit.catalog", "pairaudit.plan", "pairaudit.decisions"),
    ("pairaudit.batch", "pairaudit.pipeline"),
    ("pairaudit.engines", "pairaudit.report"),
    ("pairaudit.api", "pairaudit.review", "pairaudit.trace"),
    ("pairaudit.cli", "pairaudit.__main__"),
]


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, depth = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > depth:
                best, depth = i, len(p)
    return best


def imports(path: Path) -> set[str]:
    """Every pairaudit module ``path`` imports, anywhere in the file (TYPE_CHECKING blocks excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("pairaudit"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pairaudit"):
            for a in node.names:  # `from pairaudit.report import plots` imports a module
                sub = f"{node.module}.{a.name}"
                out.add(sub if (PKG.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                        or (PKG.parent / sub.replace(".", "/")).is_dir() else node.module)
    return out


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) < 0] == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "pairaudit"))
def test_no_upward_import(module: str) -> None:
    mine = layer_of(module)
    upward = sorted(i for i in imports(MODULES[module]) if layer_of(i) > mine)
    assert upward == [], f"{module} (layer {mine}) imports higher layers: {upward}"


def test_no_import_cycles() -> None:
    graph = {m: {i for i in imports(p) if i in MODULES and i != m} for m, p in MODULES.items() if m != "pairaudit"}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
