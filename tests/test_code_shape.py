"""Functions short enough to read at once: none in pairaudit/ over 80 lines (ruff's C90 keeps their McCabe
complexity at 15 or less: pyproject.toml). The checker is tested on planted code too."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "pairaudit"
MAX_LINES = 80


def long_functions(folder: Path, limit: int = MAX_LINES) -> list[str]:
    out = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    out.append(f"{path.relative_to(folder)}:{node.lineno} {node.name} ({lines} lines)")
    return out


def test_no_function_is_over_80_lines() -> None:
    assert long_functions(PKG) == []


def test_the_length_check_finds_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n", encoding="utf-8")
    assert long_functions(tmp_path) == [f"m.py:5 long ({MAX_LINES + 1} lines)"]
