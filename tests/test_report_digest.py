"""report.html opens on the digest, in real headless Chromium, for a scan of real HH rows with over 1,000
flagged rows: the first screen (1280 x 800, a screenshot, not only the DOM) shows the digest whole, and
every count in it is the terminal summary's."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import CHEAP, HH, write_jsonl
from support.browser import Browser, chromium
from typer.testing import CliRunner

from pairaudit.cli import app

pytest.importorskip("jinja2")
WIDTH, HEIGHT = 1280, 800
DIGEST_BG = (255, 248, 225)  # .pa-digest background, #fff8e1


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    if not HH.exists():
        pytest.fail(f"{HH} is missing: the tests need ../shared/data beside the checkout")
    root = tmp_path_factory.mktemp("digest")
    recs = [json.loads(line) for line in HH.read_text(encoding="utf-8").splitlines()[:1400]]
    recs[5]["rejected"] = recs[5]["chosen"]  # a planted identical pair (dropped)
    recs[9]["chosen"] = " "  # an empty response (dropped)
    src = write_jsonl(root / "hh.jsonl", recs)
    res = CliRunner().invoke(app, ["scan", str(src), "--out", str(root / "out"), "--only", ",".join(CHEAP),
                                   "--max-length", "96"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    return root / "out", res.output


def _terminal_counts(output: str) -> dict[str, object]:
    """The summary's numbers: totals, rows per check in the dropped and flagged tables, checks with none."""
    total = re.search(r"input ([\d,]+) = kept ([\d,]+) \+ dropped ([\d,]+)\s+\(flagged and kept: ([\d,]+)", output)
    assert total, output
    dropped_at = re.search(r"^dropped\s*$", output, re.M).start()  # type: ignore[union-attr]
    flagged_at = output.index("flagged (kept, for review)")
    none = re.search(r"(\d+) checks found no rows: (.*?)\n(?:input|skipped|failed) ", output, re.S)

    def table(text: str) -> dict[str, int]:  # rows per check (the flagged table: its last column, rows kept)
        row = r"│ (\w+)\s+│\s+(?:[\d,]+ │\s+[\d.]+% │\s+)?([\d,]+) │"
        return {m.group(1): int(m.group(2).replace(",", "")) for m in re.finditer(row, text)}

    return {"totals": [int(x.replace(",", "")) for x in total.groups()],
            "dropped": table(output[dropped_at:flagged_at]), "flagged": table(output[flagged_at:total.start()]),
            "none": sorted(x.strip() for x in none.group(2).replace("\n", " ").split(",")) if none else []}


def _li_counts(b: Browser, li: str) -> dict[str, int]:
    pairs = b.js(f"""Array.from(document.querySelectorAll('#{li} a')).map(a =>
        [a.textContent, Number(a.nextElementSibling.textContent)])""") or []
    return dict(pairs)


def test_digest_is_the_first_screen_with_the_terminals_counts(scanned: tuple[Path, str]) -> None:
    from PIL import Image

    out, terminal = scanned
    exe = chromium()
    if exe is None:
        pytest.fail("headless Chromium is not installed; run scripts/install_browser.sh — CI installs it")
    counts = _terminal_counts(terminal)
    assert counts["totals"][3] + counts["totals"][2] >= 1000, counts  # over 1,000 rows to read
    b = Browser(exe)
    try:
        b.open(out / "report.html")
        b.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1,
                                                      "mobile": False})
        rect = b.js("""(() => { const r = document.getElementById('digest').getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; })()""")
        first = b.js("document.querySelector('.pa-root h2').id")
        cards = b.js("Array.from(document.querySelectorAll('#digest .pa-card b')).map(x => Number(x.textContent))")
        dropped, flagged = _li_counts(b, "digest-dropped"), _li_counts(b, "digest-flagged")
        none = b.js("(document.getElementById('digest-none') || {textContent: ''}).textContent")
        shot = b.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})
        errors = b.console_errors()
    finally:
        b.close()
    # the digest is the first section and all of it is on the first screen
    assert first == "summary" and 0 <= rect["top"] < 200 and rect["bottom"] <= HEIGHT, rect
    # the same numbers as the terminal
    assert cards == counts["totals"][:1] + counts["totals"][1:3] + counts["totals"][3:4], (cards, counts)
    assert dropped == counts["dropped"] and flagged == counts["flagged"], (dropped, flagged, counts)
    assert sorted(x.strip() for x in none.split(": ", 1)[1].split(",")) == counts["none"], none
    assert not errors, errors
    # the screenshot: the digest's box is painted on the first screen, with text in it
    img = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    assert img.size == (WIDTH, HEIGHT)
    top, bottom, left, right = (int(rect[k]) for k in ("top", "bottom", "left", "right"))
    px = np.asarray(img).astype(int)
    bg = np.all(px == DIGEST_BG, axis=-1)
    assert bg[top + 8:bottom - 8, left + 6].mean() >= 0.9, bg[top + 8:bottom - 8, left + 6]  # the box's left edge
    dark = (px[top + 2:bottom - 2, left + 2:right - 2].sum(axis=-1) < 250).sum()
    assert dark > 2000, dark  # words are drawn in it (not an empty box)
    assert not bg[bottom + 2:min(HEIGHT, bottom + 40), left:right].any()  # the box ends where the DOM says


def test_a_trace_section_comes_before_the_digest(tmp_path: Path) -> None:
    from pairaudit.report.trace_section import add_trace_section

    doc = {"status": "found", "run_dir": "r", "data": "d", "summary": "first failure at step 3", "culprits": [7],
           "event": {"first_step": 3, "last_step": 4, "source": "log_history", "detail": "nan"},
           "settings": {"values": {}, "assumed": [], "notes": []}, "order": {},
           "policy": {"computed": False, "reason": "no checkpoint"}, "rows": []}
    (tmp_path / "trace.json").write_text(json.dumps(doc), encoding="utf-8")
    page = add_trace_section('<html><nav>x</nav><h1>t</h1><section id="digest">D</section><div>\n</div>\n</body>'
                             "</html>", tmp_path)
    assert page.index('id="trace"') < page.index('<section id="digest"') and 'href="#trace"' in page
