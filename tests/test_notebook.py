"""Execute notebooks/review.ipynb end to end with nbclient (its cells assert the review effects), from a
folder outside the checkout: the notebook must not depend on where it runs. On its built-in demo pairs and on
two real datasets: the shipped HH-RLHF example and 300 UltraFeedback rows from ../shared/data."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "review.ipynb"
ULTRAFEEDBACK = REPO.parent / "shared" / "data" / "ultrafeedback-1k" / "train_clean.jsonl"


def _data(name: str, tmp_path: Path) -> str | None:
    if name == "demo":
        return None
    if name == "hh-example":
        return str(REPO / "examples" / "hh-rlhf-helpful-base-500.jsonl")
    if not ULTRAFEEDBACK.exists():
        pytest.fail(f"{ULTRAFEEDBACK} is missing: the tests need ../shared/data beside the checkout")
    rows = tmp_path / "ultrafeedback-300.jsonl"
    rows.write_text("".join(ULTRAFEEDBACK.read_text(encoding="utf-8").splitlines(keepends=True)[:300]),
                    encoding="utf-8")
    return str(rows)


@pytest.mark.skipif(importlib.util.find_spec("pairaudit.pipeline") is None,
                    reason="pairaudit.pipeline not built yet")
@pytest.mark.parametrize("data", ["demo", "hh-example", "ultrafeedback-300"])
def test_review_notebook_runs(data: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # a kernelspec for *this* interpreter (the venv), so CI needs no registered kernel
    spec_dir = tmp_path / "jupyter" / "kernels" / "pairaudit-test"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "pairaudit test", "language": "python"}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PAIRAUDIT_NOTEBOOK_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # pairaudit importable as if installed (the checkout first on the path), nothing else from the checkout
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    example = _data(data, tmp_path)
    if example is None:
        monkeypatch.delenv("PAIRAUDIT_EXAMPLE", raising=False)
    else:
        monkeypatch.setenv("PAIRAUDIT_EXAMPLE", example)

    nb = nbformat.read(NOTEBOOK, as_version=4)
    elsewhere = tmp_path / "somewhere-else"
    elsewhere.mkdir()
    client = nbclient.NotebookClient(nb, kernel_name="pairaudit-test", timeout=300,
                                     resources={"metadata": {"path": str(elsewhere)}})
    client.execute()  # raises CellExecutionError, with the cell and traceback, if any cell fails

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any('class="pa-sides"' in h for h in html)  # a pair rendered side by side (also with ipywidgets)
    assert any('as the trainer sees it' in h for h in html)
    assert (tmp_path / "out" / "decisions.jsonl").exists()
    assert (tmp_path / "out" / "report.html").exists()
    # a static export (no widget state, as on GitHub or nbconvert) shows the pairs, not blank widget cells
    nbconvert = pytest.importorskip("nbconvert")
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    assert body.count('class="pa-sides"') >= 1 and "as the trainer sees it" in body
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    moved = re.search(r"kept (\d+) -> (\d+)", printed)
    assert moved, printed[-500:]  # the notebook's own cells assert kept = before + kept back - dropped
    if data == "demo":  # there its keep and drops do not cancel out
        assert moved.group(1) != moved.group(2), printed[-500:]
    # the notebook is stored without outputs (clean diffs)
    stored = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in stored.cells if c.cell_type == "code")
