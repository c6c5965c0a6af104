"""The "training run trace" section of report.html, rendered from ``OUT/trace.json`` when it exists.

Self-contained: it reads only trace.json (written by ``pairaudit trace``) and escapes every string with
``html.escape``, dataset text included. :func:`add_trace_section` inserts it into a rendered page.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from pairaudit.output_files import TRACE_JSON


def _e(v: Any) -> str:
    return escape("" if v is None else str(v), quote=True)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:+.3f}"
    return "-" if v is None else str(v)


def _row_html(r: dict[str, Any], culprits: set[int]) -> str:
    tok = r.get("tokens") or {}
    toks = f"{tok.get('prompt')}/{tok.get('chosen')}/{tok.get('rejected')}" if tok else "-"
    if tok.get("truncated"):
        toks += f" → {tok.get('prompt_kept')}/{tok.get('chosen_kept')}/{tok.get('rejected_kept')}"
    if tok and not tok.get("kept_by_trainer", True):
        toks += " (dropped by the trainer)"
    dpo = r.get("dpo") or {}
    found = ", ".join(f"{f.get('check')}{':' + f['field'] if f.get('field') else ''} ({f.get('action')})"
                      for f in r.get("findings") or [])
    cls = ' class="pa-trace-culprit"' if r.get("row") in culprits else ""
    return (f"<tr{cls}><td class=\"num\">{_e(r.get('row'))}</td><td>{_e(r.get('window'))}</td>"
            f"<td>{_e(', '.join(map(str, r.get('steps') or [])))}</td><td class=\"num\">{_e(r.get('evidence'))}</td>"
            f"<td>{_e('; '.join(r.get('reasons') or [])) or '-'}</td><td>{_e(found) or '-'}</td><td>{_e(toks)}</td>"
            f"<td class=\"num\">{_e(_fmt(dpo.get('logit')))}</td></tr>")


def _text_html(r: dict[str, Any]) -> str:
    text = r.get("text") or {}
    if not text:
        return ""
    parts = "".join(f"<h4>{_e(k)}</h4><pre>{_e(v)}</pre>" for k, v in text.items())
    return f"<details><summary>row {_e(r.get('row'))}: text</summary>{parts}</details>"


def _diagnosis_html(diag: dict[str, Any]) -> str:
    """Why the run died: each cause with its evidence, ranked, then the fixes in order."""
    if not diag:
        return ""
    out = [f"<h3>Diagnosis</h3><p>{_e(diag.get('summary'))}</p>"]
    causes = diag.get("causes") or []
    if causes:
        out.append("<table><tr><th>cause</th><th>verdict</th><th>score</th><th>evidence for</th>"
                   "<th>evidence against</th></tr>" + "".join(
                       f"<tr><td>{_e(c.get('cause'))}</td><td>{_e(c.get('verdict'))}</td>"
                       f"<td class=\"num\">{_e(c.get('score'))}</td><td>{_e('; '.join(c.get('for') or [])) or '-'}</td>"
                       f"<td>{_e('; '.join(c.get('against') or []) or c.get('note') or '-')}</td></tr>"
                       for c in causes) + "</table>")
    if diag.get("fixes"):
        out.append("<p>Fixes, in the order to try them:</p><ol>"
                   + "".join(f"<li><code>{_e(f)}</code></li>" for f in diag["fixes"]) + "</ol>")
    return "\n".join(out)


def trace_section(doc: dict[str, Any]) -> str:
    """HTML of one trace (``trace.json`` content)."""
    out = ['<h2 id="trace">Training run trace</h2>',
           f"<p class=\"pa-muted\">run <code>{_e(doc.get('run_dir'))}</code> · data <code>{_e(doc.get('data'))}</code> · "
           f"log <code>{_e(doc.get('log_history'))}</code></p>"]
    summary = _e(doc.get("summary"))
    if doc.get("status") != "found":
        out.append(f"<p>{summary}</p>")
        out.append(_diagnosis_html(doc.get("diagnosis") or {}))
        return "\n".join(out)
    out.append(f'<div class="pa-alert"><b>{summary}</b></div>')
    out.append(_diagnosis_html(doc.get("diagnosis") or {}))
    ev, order, pol = doc.get("event") or {}, doc.get("order") or {}, doc.get("policy") or {}
    st = doc.get("settings") or {}
    vals = st.get("values") or {}
    rows = [("failing window", f"steps {ev.get('first_step')}-{ev.get('last_step')} ({ev.get('source')})"),
            ("what failed", ev.get("detail")),
            ("data order", f"{order.get('source')}; {order.get('trainer_rows')} rows in the trainer dataset "
                           f"(trainer {vals.get('trainer')})"),
            ("settings assumed (not found)", ", ".join(f"{k}={vals.get(k)!r}" for k in st.get("assumed") or []) or "none"),
            ("policy", (f"{pol.get('policy')} ({pol.get('why')}); reference {pol.get('reference')}; beta {pol.get('beta')}"
                        if pol.get("computed") else pol.get("reason")))]
    for note in list(st.get("notes") or []) + list(order.get("checks") or []) + ([pol["reason"]] if pol.get("computed")
                                                                                 and pol.get("reason") else []):
        rows.append(("note", note))
    out.append("<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows) + "</table>")
    culprits = set(doc.get("culprits") or [])
    out.append("<h3>Rows of the failing window, strongest evidence first, then the window before</h3>")
    out.append("<table><tr><th>row</th><th>window</th><th>steps</th><th>evidence</th><th>why</th><th>findings</th>"
               "<th>tokens prompt/chosen/rejected</th><th>DPO logit</th></tr>"
               + "".join(_row_html(r, culprits) for r in doc.get("rows") or []) + "</table>")
    out.append('<p class="pa-muted">evidence: 4 non-finite output or log-prob, 3 beyond the fp16 range '
               "(|logit| ≥ ln 65504 = 11.09), 2 bf16 rounding ≥ 0.5, 1 a drop finding, 0 none. Token counts include "
               "the EOS appended to completions; → shows what survives truncation to max_length.</p>")
    texts = "".join(_text_html(r) for r in doc.get("rows") or [] if r.get("window") == "failing")
    if texts:
        out.append("<h3>Text of the failing window's rows</h3>" + texts)
    return "\n".join(out)


def add_trace_section(page: str, folder: Path) -> str:
    """``page`` with the trace section (and a nav link) when ``folder/trace.json`` exists."""
    path = Path(folder) / TRACE_JSON
    if not path.exists():
        return page
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        section = f'<h2 id="trace">Training run trace</h2><p>trace.json could not be read: {_e(exc)}</p>'
    else:
        section = trace_section(doc)
    style = "<style>.pa-trace-culprit td{background:#fee4e2;font-weight:600}</style>"
    end = page.find('<section id="digest"')  # a trace comes first: it is why the page was opened
    if end < 0:
        end = page.rfind("</div>\n</body>")
    if end < 0:
        end = page.rfind("</body>")
    page = page[:end] + style + section + "\n" + page[end:]
    return page.replace("<nav>", '<nav><a href="#trace">run trace</a>', 1)
