"""The package's imports run one way, lowest layer first (``LAYERS``; docs/layout.md draws the same picture).

Every import counts: top-level and lazy ones inside functions, those in ``TYPE_CHECKING`` blocks too (a type
annotation that names a higher layer is the same dependency), relative
ones, and string imports: a string constant that names a pairaudit module, alone or as ``"module:attribute"``
(``stages/registry.STAGE_PATHS``, the engines registry, ``pairaudit/__init__._LAZY``). Every module has a layer
(a top-level module is listed by name, a package covers its modules), no module imports a higher layer or a
name from the package root (whose lazy names come from the top), and there is no import cycle, neither
between modules nor between the listed units (packages and top-level modules). The checker runs on any copy
of the package: the last tests plant violations in a temporary copy and see each one reported.
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "pairaudit"
ROOT = "pairaudit"

# lowest first; a module may import its own layer and the ones below it. An entry is a top-level module, or
# a package (its modules included); ``pairaudit`` itself is the package root (__init__.py) only.
LAYERS: list[tuple[str, ...]] = [
    ("pairaudit.versions", "pairaudit.exit_codes", "pairaudit.errors", "pairaudit.quiet", "pairaudit.output_files"),
    ("pairaudit.schema", "pairaudit.datatypes", "pairaudit.hashing", "pairaudit.config", "pairaudit.audit",
     "pairaudit.cache"),
    ("pairaudit.io", "pairaudit.outputs", "pairaudit.trainer"),
    ("pairaudit.models",),
    ("pairaudit.checks",),
    ("pairaudit.stages",),
    ("pairaudit.catalog", "pairaudit.plan", "pairaudit.decisions", "pairaudit.options"),
    ("pairaudit.batch", "pairaudit.pipeline", "pairaudit.reapply"),
    ("pairaudit.engines", "pairaudit.report"),
    ("pairaudit.api", "pairaudit.review", "pairaudit.trace", "pairaudit"),
    ("pairaudit.cli",),
]
STRING_IMPORT = re.compile(r"pairaudit(\.[A-Za-z_][A-Za-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_.]*)?")


def module_names(pkg: Path) -> dict[str, Path]:
    """Every module of the package at ``pkg``, by dotted name (``pairaudit.x.y``; a package by its name)."""
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = [ROOT, *path.relative_to(pkg).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def unit_of(module: str) -> str | None:
    """The ``LAYERS`` entry that covers ``module`` (the root covers only itself), or None."""
    best = None
    for prefixes in LAYERS:
        for p in prefixes:
            if (module == p or (p != ROOT and module.startswith(p + "."))) and (best is None or len(p) > len(best)):
                best = p
    return best


def layer_of(module: str) -> int:
    unit = unit_of(module)
    return next((i for i, prefixes in enumerate(LAYERS) if unit in prefixes), -1)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` (a dotted path, maybe followed by attributes) starts with."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in known:
            return ".".join(parts[:k])
    return None


@functools.cache
def _references(text: str, package: str) -> tuple[tuple[str, str, str], ...]:
    """(kind, name, fallback) for every pairaudit import in a module's text (``package``: the package that
    relative imports start from). kind "import": the longest known module that ``name`` starts with;
    "from": ``name`` if it is a module, else ``fallback`` (``from pairaudit.report import plots`` imports a
    module, ``from pairaudit.errors import ConfigError`` a name); "string": ``name`` if it is a module."""
    tree = ast.parse(text)
    out: list[tuple[str, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [("import", a.name, "") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from ..y import z
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out += [("from", f"{base}.{a.name}", base) for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and STRING_IMPORT.fullmatch(node.value):
            out.append(("string", node.value.split(":")[0], ""))
    return tuple(out)


def imports(module: str, known: dict[str, Path]) -> set[str]:
    """Every pairaudit module that ``module`` imports, anywhere in its file (TYPE_CHECKING blocks included),
    string imports included; a name imported from the package root counts as the root (``pairaudit``)."""
    path = known[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for kind, name, fallback in _references(path.read_text(encoding="utf-8"), package):
        if kind == "import":
            target = _resolve(name, known)
        elif kind == "from":
            target = name if name in known else _resolve(fallback, known)
        else:  # a string names a module by its exact name (a logger "pairaudit.x" is none)
            target = name if name in known else None
        if target is not None:
            out.add(target)
    out.discard(module)
    return out


def graph(pkg: Path) -> dict[str, set[str]]:
    known = module_names(pkg)
    return {m: imports(m, known) for m in known}


def unlisted(pkg: Path) -> list[str]:
    return [m for m in module_names(pkg) if layer_of(m) < 0]


def upward_imports(pkg: Path) -> list[str]:
    """``"module (layer i) imports target (layer j)"`` for every import of a higher layer."""
    return [f"{m} (layer {layer_of(m)}) imports {i} (layer {layer_of(i)})"
            for m, targets in sorted(graph(pkg).items()) for i in sorted(targets) if layer_of(i) > layer_of(m)]


def root_imports(pkg: Path) -> list[str]:
    """Modules that import a name from the package root (its names are lazy ones from the top layer)."""
    return sorted(m for m, targets in graph(pkg).items() if ROOT in targets)


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return None


def module_cycle(pkg: Path) -> list[str] | None:
    g = graph(pkg)
    return find_cycle({m: {i for i in targets if i != ROOT} for m, targets in g.items() if m != ROOT})


def unit_cycle(pkg: Path) -> list[str] | None:
    """A cycle between units (packages and top-level modules), e.g. models -> trainer -> models."""
    edges: dict[str, set[str]] = {}
    for m, targets in graph(pkg).items():
        edges.setdefault(unit_of(m) or m, set()).update(u for i in targets if (u := unit_of(i) or i) != (unit_of(m) or m))
    return find_cycle(edges)


# -- the package as it is ---------------------------------------------------------------------------------
MODULES = module_names(PKG)


def test_every_module_has_a_layer_and_every_entry_exists() -> None:
    assert unlisted(PKG) == []
    assert [p for prefixes in LAYERS for p in prefixes if p not in MODULES] == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_import(module: str) -> None:
    mine = layer_of(module)
    upward = sorted(i for i in imports(module, MODULES) if layer_of(i) > mine)
    assert upward == [], f"{module} (layer {mine}) imports higher layers: {upward}"


def test_no_module_imports_the_package_root() -> None:
    assert root_imports(PKG) == []


def test_string_imports_are_seen() -> None:
    """The registries' strings count as imports (so the tests above cover them)."""
    assert "pairaudit.stages.flips.stage" in imports("pairaudit.stages.registry", MODULES)
    assert "pairaudit.engines.local" in imports("pairaudit.engines", MODULES)
    assert "pairaudit.api" in imports(ROOT, MODULES)


def test_no_import_cycle_between_modules() -> None:
    assert module_cycle(PKG) is None


def test_no_import_cycle_between_packages() -> None:
    assert unit_cycle(PKG) is None


# -- the checker fails on planted violations --------------------------------------------------------------
def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / ROOT
    shutil.copytree(PKG, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _plant(pkg: Path, rel: str, code: str) -> None:
    path = pkg / rel
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + code + "\n", encoding="utf-8")


@pytest.mark.parametrize(("rel", "code", "expected"), [
    ("io/base.py", "def _planted():\n    from pairaudit.cli import app\n    return app",
     "pairaudit.io.base (layer 2) imports pairaudit.cli (layer 10)"),
    ("checks/base.py", "def _planted():\n    from ..report import html\n    return html",
     "pairaudit.checks.base (layer 4) imports pairaudit.report.html (layer 8)"),
    ("stages/registry.py", '_PLANTED = ("pairaudit.report.html:render_report",)',
     "pairaudit.stages.registry (layer 5) imports pairaudit.report.html (layer 8)"),
    ("errors.py", 'import importlib\n_P = importlib.import_module("pairaudit.pipeline")',
     "pairaudit.errors (layer 0) imports pairaudit.pipeline (layer 7)"),
], ids=["lazy", "relative", "string", "import_module"])
def test_a_planted_upward_import_is_reported(tmp_path: Path, rel: str, code: str, expected: str) -> None:
    pkg = _copy(tmp_path)
    assert upward_imports(pkg) == []
    _plant(pkg, rel, code)
    assert upward_imports(pkg) == [expected]


def test_a_planted_root_import_and_unlisted_module_are_reported(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    _plant(pkg, "pipeline.py", "def _planted():\n    from pairaudit import scan\n    return scan")
    (pkg / "newthing.py").write_text('"""A module nobody gave a layer."""\n', encoding="utf-8")
    assert root_imports(pkg) == ["pairaudit.pipeline"]
    assert unlisted(pkg) == ["pairaudit.newthing"]


def test_a_planted_cycle_between_packages_is_reported(tmp_path: Path) -> None:
    """trainer and io share a layer, so only the cycle test sees trainer -> io -> trainer."""
    pkg = _copy(tmp_path)
    _plant(pkg, "trainer/split.py", "def _planted():\n    from pairaudit.io import base\n    return base")
    assert unit_cycle(pkg) is None
    _plant(pkg, "io/base.py", "def _planted():\n    from pairaudit.trainer import split\n    return split")
    cycle = unit_cycle(pkg)
    assert cycle is not None and set(cycle) == {"pairaudit.io", "pairaudit.trainer"}
    assert module_cycle(pkg) is not None  # trainer.split -> io.base -> trainer.split
    assert upward_imports(pkg) == []
