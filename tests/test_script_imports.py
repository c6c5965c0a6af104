"""Every pairaudit name that a script, the notebook or a doc's Python block imports exists, lazy imports inside
functions included: a module moved or a name renamed breaks these files silently otherwise (their runs are
benchmarks and evaluations, not tests). The names are looked up by importing their modules, not by reading
files."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def sources() -> dict[str, str]:
    """Python text by file: scripts/*.py, the notebook's code cells, the python blocks of README.md and docs/."""
    out = {f"scripts/{p.name}": p.read_text(encoding="utf-8") for p in sorted((ROOT / "scripts").glob("*.py"))}
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        out[f"notebooks/{nb.name}"] = "\n".join(line for c in code for line in c.splitlines()
                                                if not line.lstrip().startswith(("%", "!")))
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = FENCE.findall(md.read_text(encoding="utf-8"))
        if blocks:
            out[str(md.relative_to(ROOT))] = "\n".join(blocks)
    return out


def imported_names(text: str) -> list[tuple[str, str | None]]:
    """(module, name or None) for every ``import pairaudit...`` / ``from pairaudit... import name``."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] == "pairaudit"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "pairaudit":
            out += [(node.module, a.name) for a in node.names]
    return out


def missing(module: str, name: str | None) -> str | None:
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        return f"{module}: {exc}"
    if name is None or hasattr(mod, name):
        return None
    if hasattr(mod, "__path__") and importlib.util.find_spec(f"{module}.{name}") is not None:  # a submodule
        return None
    return f"{module} has no {name}"


SOURCES = sources()


def test_the_files_are_found() -> None:
    assert {"scripts/compare_outputs.py", "scripts/bench_dedup.py", "notebooks/review.ipynb", "README.md"} <= set(SOURCES)


@pytest.mark.parametrize("path", sorted(p for p in SOURCES if imported_names(SOURCES[p])))
def test_every_imported_pairaudit_name_exists(path: str) -> None:
    problems = sorted({m for module, name in imported_names(SOURCES[path]) if (m := missing(module, name))})
    assert problems == [], f"{path} imports names that do not exist: {problems}"


@pytest.mark.parametrize(("text", "expected"), [
    ("def f():\n    from pairaudit.hashing import sum_vectors\n",  # a lazy import of a name from the wrong module
     ["pairaudit.hashing has no sum_vectors"]),
    ("import pairaudit.nosuch\n", ["pairaudit.nosuch: No module named 'pairaudit.nosuch'"]),
    ("from pairaudit.trainer import truncation\nfrom pairaudit import scan\n", []),
])
def test_a_wrong_import_is_reported(text: str, expected: list[str]) -> None:
    assert sorted({m for module, name in imported_names(text) if (m := missing(module, name))}) == expected
