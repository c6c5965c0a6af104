"""README.md's code blocks run as written, in order, in a fresh folder holding the shipped example.

Blocks marked ``<!-- readme-test: skip (...) -->`` are not run: only the two commands that install
(``scripts/quickstart.sh``) and run the test suite (``scripts/test.sh``) may carry the marker. The folder
holds what the README names: ``examples/`` (the shipped example), ``pairs.jsonl`` (a copy of it, "your
data") and ``my-model/`` (a tiny random Llama with the bundled SmolLM2 tokenizer, "your model").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT

README = ROOT / "README.md"
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\b[^>]*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
ALLOWED_SKIPS = ("scripts/quickstart.sh", "scripts/test.sh")


def readme_blocks(text: str) -> list[tuple[str, str, bool]]:
    """(language, code, skipped) for every fenced block, in order."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append((m.group(1), "\n".join(lines[i + 1:j]) + "\n", bool(SKIP.match(prev.strip()))))
        i = j + 1
    return out


def test_readme_blocks_parse() -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    assert {lang for lang, _, _ in blocks} <= {"bash", "python"}, "README blocks are bash or python"
    skipped = [code for _, code, skip in blocks if skip]
    assert len(skipped) == 2 and all(any(c in code for c in ALLOWED_SKIPS) for code in skipped), skipped
    run = [code for _, code, skip in blocks if not skip]
    assert any("pairaudit scan" in c for c in run) and any("train_dataset=audit.clean" in c for c in run)
    assert any("pairaudit trace" in c for c in run)
    assert len(README.read_text(encoding="utf-8").splitlines()) < 140, "README stays a short user page"


def test_readme_code_blocks_run(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "tests"))
    from support.trace_helpers import save_init

    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / EXAMPLE.name)
    shutil.copy(EXAMPLE, tmp_path / "pairs.jsonl")
    save_init(tmp_path / "my-model")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "2",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "100"}
    blocks = [(lang, code) for lang, code, skip in readme_blocks(README.read_text(encoding="utf-8")) if not skip]
    for n, (lang, code) in enumerate(blocks, 1):
        script = tmp_path / f"block{n}.{'sh' if lang == 'bash' else 'py'}"
        script.write_text(code, encoding="utf-8")
        cmd = ["bash", "-euo", "pipefail", str(script)] if lang == "bash" else [sys.executable, str(script)]
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"README block {n} ({lang}) failed:\n{code}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    # what the blocks promise happened
    assert (tmp_path / "audit" / "report.html").exists() and (tmp_path / "audit" / "clean.jsonl").exists()
    assert (tmp_path / "run" / "pairaudit-record" / "meta.json").exists()
