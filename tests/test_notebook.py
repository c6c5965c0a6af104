"""Execute notebooks/review.ipynb end to end with nbclient (its cells assert the review effects)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "review.ipynb"


@pytest.mark.skipif(importlib.util.find_spec("pairaudit.pipeline") is None,
                    reason="pairaudit.pipeline not built yet")
def test_review_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.delenv("PAIRAUDIT_EXAMPLE", raising=False)

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="pairaudit-test", timeout=300,
                                     resources={"metadata": {"path": str(REPO / "notebooks")}})
    client.execute()  # raises CellExecutionError, with the cell and traceback, if any cell fails

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any('class="pa-sides"' in h for h in html)  # a pair rendered side by side
    assert (tmp_path / "out" / "decisions.jsonl").exists()
    assert (tmp_path / "out" / "report.html").exists()
    # the notebook is stored without outputs (clean diffs)
    stored = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in stored.cells if c.cell_type == "code")
