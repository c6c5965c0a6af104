"""A minimal self-contained report.html, used when the report extra (jinja2, matplotlib) is missing."""

from __future__ import annotations

import html
import json
import os
import tempfile
from pathlib import Path

from pairaudit.output_files import REPORT_HTML, REPORT_JSON
from pairaudit.outputs.single import committed_file, refresh_record
from pairaudit.report.flip_section import flip_lines
from pairaudit.report.summary import assumption_lines


def render_plain(out_dir: Path) -> Path:
    report = json.loads((Path(out_dir) / REPORT_JSON).read_text(encoding="utf-8"))
    t = report["totals"]
    rows = "".join(
        f"<tr><td>{html.escape(n)}</td><td>{html.escape(c['status'])}</td><td>{html.escape(c['action'])}</td>"
        f"<td>{c['findings']}</td><td>{c['rows']}</td><td>{html.escape(c['description'])}</td></tr>"
        for n, c in report["checks"].items())
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        "<title>pairaudit report</title></head><body>"
        f"<h1>pairaudit report</h1><p>source: {html.escape(str(report['source']['path']))} "
        f"({html.escape(str(report['source']['format']))})</p>"
        f"<p>input {t['input']} &middot; kept {t['kept']} &middot; dropped {t['dropped']} &middot; "
        f"flagged {t['flagged']}</p>"
        + "".join(f"<p>{html.escape(line)}</p>" for line in assumption_lines(report) + flip_lines(report)) +
        "<table border='1'><tr><th>check</th><th>status</th><th>action</th><th>findings</th><th>rows</th>"
        f"<th>description</th></tr>{rows}</table>"
        "<p>Install <code>pairaudit[report]</code> for plots and examples.</p></body></html>\n")
    path = Path(out_dir) / REPORT_HTML
    target = committed_file(Path(out_dir), REPORT_HTML)  # never a file the link leads to outside --out
    fd, tmp = tempfile.mkstemp(prefix=".report.html.", suffix=".tmp", dir=target.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(page)
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    refresh_record(Path(out_dir), REPORT_HTML)
    return path
