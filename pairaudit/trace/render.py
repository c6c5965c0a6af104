"""``trace.json`` (sorted keys, no timings: the same run and data give the same bytes) and the terminal view."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pairaudit.output_files import REPORT_JSON, TRACE_DROPS, TRACE_JSON
from pairaudit.trace.explain import rank_rows
from pairaudit.trace.record import StepTable
from pairaudit.versions import __version__

CULPRIT_LEVEL = 3  # evidence levels: see pairaudit.trace.explain.rank_rows


def _steps_json(steps: StepTable, first: int, last: int) -> dict[str, Any]:
    return {str(k): v for k, v in steps.select(first, last).per_step().items()}


def _row_steps(steps: StepTable) -> dict[int, list[int]]:
    out: dict[int, set[int]] = {}
    for st, row in zip(steps.data["step"].tolist(), steps.data["row"].tolist()):
        if row >= 0:
            out.setdefault(int(row), set()).add(int(st))
    return {r: sorted(v) for r, v in out.items()}


def build_doc(*, status: str, common: dict[str, Any], event: Any = None, window: tuple[int, int] | None = None,
              prev: tuple[int, int] | None = None, steps: StepTable | None = None,
              order_info: dict[str, Any] | None = None, info: dict[int, dict[str, Any]] | None = None,
              window_rows: list[int] | None = None, prev_rows: list[int] | None = None,
              policy: dict[str, Any] | None = None, audit: str | None = None,
              run_rates: dict[str, Any] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"pairaudit_version": __version__, "status": status, **common}
    if status == "unreliable" and event is not None and window is not None:
        rel = doc.get("reliability") or {}
        doc.update({"event": event.to_json(), "order": order_info or {}, "culprits": [], "suspects": [], "rows": [],
                    "window": {"first_step": window[0], "last_step": window[1]}})
        span = f"step {window[1]}" if window[0] == window[1] else f"steps {window[0]}-{window[1]}"
        doc["summary"] = (f"unreliable: the rows of {span} ({event.detail}) cannot be named "
                          f"with confidence: {rel.get('fix')}; why: " + "; ".join((rel.get("problems") or [])[:2])
                          + (f" (and {len(rel['problems']) - 2} more in trace.json)" if len(rel.get("problems") or []) > 2
                             else ""))
        return doc
    if status != "found" or event is None or window is None or steps is None or info is None:
        last = doc.get("last_logged_step")
        doc["summary"] = ("no logged value is non-finite or jumps in this run's log_history"
                          + (f" (it ends at step {last}: trainer_state.json is saved with checkpoints, so a failure "
                             "after the last one is not in it)" if last is not None else "")
                          + ", and no recorded event: nothing to trace (use --step N to look at a given step, and "
                          "the recording callback for the next run)")
        return doc
    first, last = window
    in_window = set(window_rows or [])
    row_steps = _row_steps(steps)
    ranked = rank_rows({r: info[r] for r in in_window}, run_rates)
    ranked_prev = rank_rows({r: info[r] for r in (prev_rows or []) if r not in in_window}, run_rates)
    rows_out = []
    for part, items in (("failing", ranked), ("contrast", ranked_prev)):
        for row, level, reasons in items:
            d = info[row]
            rows_out.append({"row": row, "window": part, "steps": row_steps.get(row, []), "evidence": level,
                             "reasons": reasons, **{k: d[k] for k in ("findings", "tokens", "dpo", "recorded", "text")
                                                   if d.get(k) is not None}})
    culprits = [r for r, lv, _ in ranked if lv >= CULPRIT_LEVEL]
    suspects = [r for r, lv, _ in ranked if 0 < lv < CULPRIT_LEVEL]
    doc.update({
        "event": event.to_json(),
        "window": {"first_step": first, "last_step": last, "rows": sorted(in_window),
                   "steps": _steps_json(steps, first, last)},
        "contrast": ({"first_step": prev[0], "last_step": prev[1], "rows": sorted(prev_rows or []),
                      "steps": _steps_json(steps, prev[0], prev[1])} if prev else None),
        "order": order_info or {}, "policy": policy or {}, "audit": audit, "run_finding_rates": run_rates,
        "rows": rows_out, "culprits": culprits, "suspects": suspects,
        "comparison": {"failing": _stats([info[r] for r in in_window]),
                       "contrast": _stats([info[r] for r in prev_rows or [] if r not in in_window]) if prev else None},
    })
    doc["summary"] = _summary(doc)
    return doc


def _stats(items: list[dict[str, Any]]) -> dict[str, Any]:
    logits = [abs(d["dpo"]["logit"]) for d in items if isinstance((d.get("dpo") or {}).get("logit"), float)]
    nonfinite = sum(1 for d in items if any(str(x).startswith("non-finite") for x in (d.get("dpo") or {}).get("limits", [])))
    return {"rows": len(items), "rows_with_findings": sum(1 for d in items if d.get("findings")),
            "rows_with_drop_findings": sum(1 for d in items if any(f.get("action") == "drop" for f in d.get("findings", []))),
            "nonfinite_dpo": nonfinite,
            "max_abs_logit": round(max(logits), 4) if logits else None,
            "median_abs_logit": round(sorted(logits)[len(logits) // 2], 4) if logits else None}


def _summary(doc: dict[str, Any]) -> str:
    ev, w = doc["event"], doc["window"]
    span = f"step {w['first_step']}" if w["first_step"] == w["last_step"] else f"steps {w['first_step']}-{w['last_step']}"
    head = f"first failure: {ev['detail']} ({ev['source']}), {span}, {len(w['rows'])} rows"
    if doc["culprits"]:
        return head + "; culprit row(s): " + ", ".join(map(str, doc["culprits"]))
    if doc["suspects"]:
        return head + "; no row carries direct evidence, suspects: " + ", ".join(map(str, doc["suspects"]))
    return head + "; no row of the window stands out (no finding, no extreme or non-finite logit)"


def write_outputs(doc: dict[str, Any], out_dir: Path, drops: bytes | None = None, *, render_html: bool = True) -> None:
    """``trace.json`` and ``trace-drop.jsonl`` (the drop decisions of a data cause; an older one is removed
    when there is none) as outputs of ``out_dir``, under the output folder's rules (never a file pairaudit
    did not write), then report.html re-rendered when the folder holds a scan."""
    from pairaudit.outputs.single import replace_outputs

    out_dir = Path(out_dir)
    text = json.dumps(_clean(doc), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False, default=_safe)
    replace_outputs(out_dir, {TRACE_JSON: (text + "\n").encode("utf-8"), TRACE_DROPS: drops},
                    doing="writing trace.json")
    if render_html and (out_dir / REPORT_JSON).exists():
        try:
            from pairaudit.report.html import render_report
        except ImportError:  # jinja2 missing: trace.json is the output
            return
        render_report(out_dir)


def _clean(obj: Any) -> Any:
    """Non-finite floats as strings ("nan", "inf"): trace.json stays strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _safe(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


def _flags(findings: list[dict[str, Any]]) -> list[str]:
    """Flag findings as ``check (fields)``; drop findings are already in the reasons."""
    fields: dict[str, list[str]] = {}
    for f in findings:
        if f.get("action") != "drop":
            fields.setdefault(f["check"], []).extend([f["field"]] if f.get("field") else [])
    return [f"{c} ({', '.join(v)})" if v else c for c, v in fields.items()]


def print_trace(doc: dict[str, Any], console: Any, out_dir: Path) -> None:
    """The terminal view of a trace (rich)."""
    from rich.markup import escape
    from rich.table import Table

    if doc["status"] == "unreliable":  # what to pass comes first
        console.print(f"[bold yellow]{escape(doc['summary'])}[/bold yellow]")
        console.print(f"[bold]pairaudit trace[/bold] {escape(doc['run_dir'])}  data {escape(doc['data'])}")
        print_diagnosis(doc.get("diagnosis") or {}, console)
        return
    console.print(f"[bold]pairaudit trace[/bold] {escape(doc['run_dir'])}  data {escape(doc['data'])}")
    st = doc.get("settings") or {}
    if doc["status"] != "found":
        console.print(escape(doc["summary"]))
        print_diagnosis(doc.get("diagnosis") or {}, console)
        return
    console.print(f"[bold red]{escape(doc['summary'])}[/bold red]")
    order = doc.get("order") or {}
    console.print(f"order: {escape(str(order.get('source')))}; {order.get('trainer_rows')} rows in the trainer dataset "
                  f"({escape(str((st.get('values') or {}).get('trainer')))}, trained on the "
                  f"{escape(str(order.get('trainer_dataset')))}; rows are source rows)")
    checks = order.get("verification") or []
    if checks:
        console.print("checked against the run's logs: " + escape(", ".join(f"{c['check']} {c['result']}"
                                                                         for c in checks)))
    assumed = (doc.get("reliability") or {}).get("assumed", st.get("assumed"))
    if assumed:
        vals = st.get("values") or {}
        console.print("[yellow]settings that change the order and were not found (defaults assumed):[/yellow] "
                      + escape(", ".join(f"{k}={vals.get(k)!r}" for k in assumed)))
    for note in list(st.get("notes") or []) + list(order.get("checks") or []):
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    pol = doc.get("policy") or {}
    if pol.get("computed"):
        console.print(f"policy: {escape(str(pol['policy']))} ({escape(pol.get('why', ''))}); reference "
                      f"{escape(str(pol.get('reference')))}; beta {pol.get('beta')}")
        if pol.get("reason"):
            console.print(f"[yellow]note:[/yellow] {escape(pol['reason'])}")
    elif pol:
        console.print(f"[yellow]no DPO logit:[/yellow] {escape(str(pol.get('reason')))}")
    table = Table(show_lines=False, title="rows of the failing window (strongest evidence first), then the window before")
    for col in ("row", "window", "steps", "evidence", "tokens p/c/r (kept)", "DPO logit", "why"):
        table.add_column(col, overflow="fold")
    for r in doc["rows"]:
        tok = r.get("tokens") or {}
        toks = (f"{tok.get('prompt')}/{tok.get('chosen')}/{tok.get('rejected')}"
                + (f" ({tok.get('prompt_kept')}/{tok.get('chosen_kept')}/{tok.get('rejected_kept')})"
                   if tok.get("truncated") else "")) if tok else "-"
        dpo = r.get("dpo") or {}
        logit = dpo.get("logit")
        why = list(r.get("reasons") or []) + _flags(r.get("findings") or [])
        mark = "[bold red]" if r["row"] in doc["culprits"] else ""
        table.add_row(f"{mark}{r['row']}", r["window"], ",".join(map(str, r["steps"])), str(r["evidence"]), toks,
                      "-" if logit is None else (f"{logit:+.2f}" if isinstance(logit, float) else str(logit)),
                      escape("; ".join(why)) or "-")
    console.print(table)
    print_diagnosis(doc.get("diagnosis") or {}, console)
    console.print(f"trace.json: {out_dir / 'trace.json'}" + (f"   report: {out_dir / 'report.html'}"
                                                              if (out_dir / 'report.html').exists() else ""))


def diagnosis_lines(diag: dict[str, Any]) -> list[str]:
    """The diagnosis as plain lines (terminal and README)."""
    if not diag:
        return []
    if diag.get("status") == "no_failure":
        return ["diagnosis: " + str(diag.get("summary"))]
    out = ["diagnosis: " + str(diag.get("summary"))]
    for i, c in enumerate(diag.get("causes") or [], 1):
        out.append(f"  {i}. {c['cause']}: {c['verdict']}" + (f" (score {c['score']:.2f})" if c["score"] else ""))
        out += [f"       + {x}" for x in c.get("for") or []]
        out += [f"       - {x}" for x in c.get("against") or []]
        if c.get("note"):
            out.append(f"       ? {c['note']}")
        if c["verdict"] == "unsupported" and not c.get("note"):
            out.append("       ? nothing in the run's files speaks for or against it")
    if diag.get("fixes"):
        out.append("fixes, in the order to try them:")
        out += [f"  {i}. {f}" for i, f in enumerate(diag["fixes"], 1)]
    return out


def print_diagnosis(diag: dict[str, Any], console: Any) -> None:
    from rich.markup import escape

    for line in diagnosis_lines(diag):
        console.print(escape(line), highlight=False, soft_wrap=True)
