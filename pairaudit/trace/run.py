"""``pairaudit trace RUN_DIR --data SOURCE``: the failing step, its rows, and what is wrong with them.

1. Settings (:mod:`~pairaudit.trace.settings`) and ``log_history`` (:mod:`~pairaudit.trace.history`) give the
   first failing logging window; the recording callback's events, when present, give the exact step.
2. The rows of that window and of the window before it come from the callback's record, or are
   reconstructed (:mod:`~pairaudit.trace.rows` for which rows the trainer keeps, :mod:`~pairaudit.trace.order`
   for the order); the reconstruction is checked against the epochs the run logged.
3. The rows are explained (:mod:`~pairaudit.trace.explain`): the scan's findings (the scan runs into the
   output folder unless ``--audit`` names one), TRL token lengths after truncation and, when a checkpoint
   from before the failure exists, the real DPO logit with it as policy.
4. ``trace.json`` and the trace section of ``report.html`` are written (:mod:`~pairaudit.trace.render`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.errors import ConfigError, InputError, PairauditError
from pairaudit.report.terminal import echo
from pairaudit.trace import explain, history, order, record, rows, settings, verify
from pairaudit.trace.checkpoints import checkpoint_step

DPO_KEYS = ("rewards/margins", "rewards/chosen", "logps/chosen", "logits/chosen")


@dataclass
class TraceResult:
    doc: dict[str, Any]  # the content of trace.json
    out_dir: Path

    @property
    def culprits(self) -> list[int]:
        return list(self.doc.get("culprits") or [])

    @property
    def found(self) -> bool:
        return self.doc.get("status") == "found"


def _checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    out = []
    for p in run_dir.glob("checkpoint-*"):
        step = checkpoint_step(p)
        if step >= 0 and p.is_dir() and (p / "config.json").exists():
            out.append((step, p))
    return sorted(out)


def _default_tokenizer(run_dir: Path, s: settings.TraceSettings) -> None:
    if s.tokenizer is not None:
        return
    for _, ckpt in reversed(_checkpoints(run_dir)):
        if (ckpt / "tokenizer_config.json").exists():
            s.set("tokenizer", str(ckpt), f"{ckpt.name} (the run's saved tokenizer)")
            return
    s.notes.append("no training tokenizer found in the run folder: lengths and row filters use the bundled "
                   "SmolLM2 tokenizer (pass --set tokenizer=PATH)")


def _trainer_kind(s: settings.TraceSettings, hist: history.History | None) -> None:
    if s.trainer != "auto":
        return
    dpo = hist is not None and any(k in e for e in hist.entries for k in DPO_KEYS)
    s.set("trainer", "trl-dpo" if dpo else "transformers",
          f"inferred from log_history ({'DPO metrics' if dpo else 'no DPO metrics'} logged)")


def _record_event(events: list[dict[str, Any]]) -> history.Event | None:
    exact = [e for e in events if e.get("kind") in ("grad", "output") and isinstance(e.get("step"), int)]
    if not exact:
        return None
    first = min(exact, key=lambda e: e["step"])
    detail = "; ".join(sorted({f"{e['kind']}: {e.get('detail', '')}" for e in exact if e["step"] == first["step"]}))
    return history.Event("nonfinite", first["step"], first["step"], {}, detail, source="recording callback")


def _scan_audit(data: str, out: Path, s: settings.TraceSettings, audit: Path | None, skip: list[str],
                log: Callable[[str], None]) -> Path:
    if audit is not None:
        if not (audit / "report.json").exists():
            raise InputError(f"--audit {audit} holds no report.json", fix="run `pairaudit scan` into it first")
        return audit
    from pairaudit.api import scan

    prev = out / "report.json"
    if prev.exists():  # reuse a scan of the same source with the same trainer settings
        try:
            rep = json.loads(prev.read_text(encoding="utf-8"))
            cfg = rep.get("config") or {}
            same = (Path(str((rep.get("source") or {}).get("path"))).resolve() == Path(data).resolve()
                    and cfg.get("tokenizer") == s.tokenizer and cfg.get("max_length") == s.max_length
                    and cfg.get("max_prompt_length") is None and cfg.get("truncation_mode") == s.truncation_mode
                    and sorted(cfg.get("skip") or []) == sorted(skip) and rep.get("status") == "ok")
        except (OSError, ValueError):
            same = False
        if same:
            log(f"reusing the scan in {out}")
            return out
    log(f"scanning {data} into {out} (every check pairaudit has; --audit DIR reuses an earlier scan)")
    scan(data, out, tokenizer=s.tokenizer, max_length=s.max_length, max_prompt_length=None,
         truncation_mode=s.truncation_mode, skip=list(skip), columns=dict(s.columns), log=log)
    return out


def trace(run_dir: str | Path, data: str | Path, *, out: str | Path | None = None, audit: str | Path | None = None,
          settings_file: str | Path | None = None, assignments: dict[str, Any] | None = None,
          trust_pickle: bool = False, use_record: bool = True, step: int | None = None,
          policy: str | None = None, reference: str | None = None, device: str = "auto",
          precision: str = "fp32", jump_z: float = 10.0, skip: list[str] | None = None,
          render_html: bool = True, log: Callable[[str], None] | None = None) -> TraceResult:
    """Trace a run that went non-finite back to its source rows; writes ``OUT/trace.json`` (+ report.html)."""
    from pairaudit.trace.render import build_doc, write_outputs

    log = log or (lambda m: echo(f"pairaudit: {m}", err=True))
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InputError(f"run folder {run_dir} does not exist", fix="pass the trainer's output_dir")
    data = str(data)
    out_dir = Path(out) if out is not None else Path(audit) if audit is not None else run_dir / "pairaudit-trace"
    rec_dir = run_dir / record.RECORD_DIR
    table, meta, events = None, None, []
    if use_record and (rec_dir / record.META).exists():
        table, meta = record.read_record(rec_dir)
        events = record.read_events(rec_dir)
    damaged: list[str] = []  # a damaged checkpoint-N/trainer_state.json beside a readable one
    state, state_path = history.find_state(run_dir, damaged)
    if state is None and meta is None and step is None:
        raise InputError(f"{run_dir} holds no trainer_state.json (in it or in checkpoint-*/) and no pairaudit record",
                         fix="pass the output_dir of a transformers / TRL run, or --step N to trace a given step")
    s = settings.resolve(run_dir, meta=meta, state=state, state_path=state_path,
                         settings_file=Path(settings_file) if settings_file else None,
                         assignments=assignments or {}, trust_pickle=trust_pickle)
    s.notes.extend(damaged)
    hist = history.analyse(state.get("log_history") or [], state_path=state_path, jump_z=jump_z) if state else None
    _trainer_kind(s, hist)
    _default_tokenizer(run_dir, s)

    # -- which window failed ---------------------------------------------------------------------
    if step is not None:
        event = history.Event("chosen", int(step), int(step), {}, f"step {step} chosen with --step", source="--step")
    else:
        candidates = [e for e in (_record_event(events), hist.event if hist else None) if e is not None]
        event = min(candidates, key=lambda e: (e.step, e.step - e.first_step)) if candidates else None
    doc_common = {"run_dir": str(run_dir), "data": data, "settings": s.to_json(),
                  "log_history": str(state_path) if state_path else None,
                  "first_nonfinite": hist.first_nonfinite.to_json() if hist and hist.first_nonfinite else None,
                  "first_jump": hist.first_jump.to_json() if hist and hist.first_jump else None}
    if event is None:
        last_logged = hist.entries[-1]["step"] if hist and hist.entries else None
        doc_common["last_logged_step"] = last_logged
        doc = build_doc(status="no_failure", common=doc_common)
        drops = _diagnose(doc, run_dir, state, s, None, data, out_dir, reference)
        write_outputs(doc, out_dir, drops, render_html=False)
        return TraceResult(doc, out_dir)
    first, last = event.first_step, event.step
    if event.source == "log_history" and hist is not None:
        prev = hist.previous_window(first)
    else:
        width = last - first + 1
        prev = (max(1, first - width), first - 1) if first > 1 else None

    # -- rows of those steps ---------------------------------------------------------------------
    lengths = rows.token_lengths(data, s) if s.trainer == "trl-dpo" else None
    trainer_rows = rows.trainer_rows(data, s, lengths=lengths)
    order_info: dict[str, Any] = {"trainer_rows": len(trainer_rows), "checks": []}
    lo = prev[0] if prev else first
    have = table is not None and len(table) and set(range(lo, last + 1)) <= set(table.steps.tolist())
    if have:
        steps = table.select(lo, last).with_rows(trainer_rows)
        order_info["source"] = "recorded by PairauditCallback"
        n_meta = (meta or {}).get("dataset_length")
        if n_meta is not None and n_meta != len(trainer_rows) and (steps.data["row"] < 0).any():
            order_info["checks"].append(f"the trainer dataset had {n_meta} rows, pairaudit's emulation of the "
                                        f"trainer's filter keeps {len(trainer_rows)}: trainer indices may map to the "
                                        "wrong source rows (record source rows with add_pairaudit_callback)")
    else:
        if table is not None and len(table):
            order_info["checks"].append("the record does not cover these steps: the order was reconstructed")
        table_r, sched = order.reconstruct(s, len(trainer_rows), last_step=last)
        steps = table_r.select(lo, last).with_rows(trainer_rows)
        order_info.update(source="reconstructed", schedule=sched.to_json())
        mismatches, inside_epoch = verify.epoch_check(hist, sched)
        order_info["checks"] += mismatches
        order_info["epochs_compared_inside_an_epoch"] = inside_epoch
        if state and state.get("max_steps") and int(state["max_steps"]) != sched.max_steps:
            order_info["checks"].append(f"trainer_state.json says max_steps={state['max_steps']}, the reconstruction "
                                        f"{sched.max_steps}")
    if not len(steps.select(first, last)):
        raise ConfigError(f"no rows for steps {first}-{last}: the run has fewer steps with these settings",
                          fix="check the settings listed by `pairaudit trace --json` (max_steps, batch size...)")
    reliability = verify.assess(s, order_info, inside_epoch=int(order_info.get("epochs_compared_inside_an_epoch", 0)))
    doc_common["reliability"] = reliability
    if not reliability["reliable"]:
        doc = build_doc(status="unreliable", common=doc_common, event=event, window=(first, last), prev=prev,
                        order_info=order_info)
        drops = _diagnose(doc, run_dir, state, s, (first, last), data, out_dir, reference)
        write_outputs(doc, out_dir, drops, render_html=False)
        return TraceResult(doc, out_dir)

    # -- explain ---------------------------------------------------------------------------------
    out_dir.mkdir(parents=True, exist_ok=True)
    audit_dir = _scan_audit(data, out_dir, s, Path(audit) if audit else None, skip or [], log)
    window_rows = sorted({int(r) for r in steps.select(first, last).data["row"] if r >= 0})
    prev_rows = sorted({int(r) for r in steps.select(lo, first - 1).data["row"] if r >= 0}) if prev else []
    all_rows = sorted(set(window_rows) | set(prev_rows))
    findings = explain.audit_findings(audit_dir, all_rows)
    run_rates = explain.finding_rates(audit_dir, trainer_rows)
    info: dict[int, dict[str, Any]] = {r: {"findings": findings.get(r, [])} for r in all_rows}
    if lengths is None:
        try:
            lengths = rows.token_lengths(data, s)
        except PairauditError as exc:
            order_info["checks"].append(f"token lengths not computed: {exc}")
    for r in all_rows:
        if lengths is not None:
            info[r]["tokens"] = lengths.lookup(r)
    texts = explain.read_records(data, window_rows)
    for r, rec in texts.items():
        if rec.data is not None:
            info[r]["text"] = {k: explain.excerpt(rec.data.get(k)) for k in ("prompt", "chosen", "rejected")
                               if k in rec.data}
    for ev in events:
        if not isinstance(ev.get("step"), int) or not first <= ev["step"] <= last:
            continue  # after a non-finite update every row's output is non-finite: only the window counts
        for seq in ev.get("sequences") or []:
            if seq.get("row") in info:
                info[seq["row"]].setdefault("recorded", []).append({"step": ev.get("step"), "side": seq.get("side")})
    policy_info = _policy(run_dir, policy, reference, first, s, audit_dir, all_rows, info, device, precision, log)
    doc = build_doc(status="found", common=doc_common, event=event, window=(first, last), prev=prev,
                    steps=steps, order_info=order_info, info=info, window_rows=window_rows, prev_rows=prev_rows,
                    policy=policy_info, audit=str(audit_dir), run_rates=run_rates)
    drops = _diagnose(doc, run_dir, state, s, (first, last), data, out_dir, reference)
    write_outputs(doc, out_dir, drops, render_html=render_html)
    return TraceResult(doc, out_dir)


def _diagnose(doc: dict[str, Any], run_dir: Path, state: dict[str, Any] | None, s: settings.TraceSettings,
              window: tuple[int, int] | None, data: str, out_dir: Path, reference: str | None) -> bytes | None:
    """Add the diagnosis (why the run died, what to change); returns the drop decisions it refers to (the
    content of ``trace-drop.jsonl``), or None."""
    from pairaudit.trace.diagnose import diagnose

    diag = diagnose(run_dir=run_dir, state=state, args=s.run_args, args_source=s.run_args_source, window=window,
                    trace_doc=doc, data=data, out_dir=out_dir, reference=reference)
    doc["diagnosis"] = diag
    for c in diag.get("causes") or []:
        if c.get("decisions") and c.get("rows"):
            return "".join(json.dumps({"row": r, "decision": "drop", "note": "pairaudit trace: row of the failing "
                                       f"window {window[0]}-{window[1]}" if window else "pairaudit trace"}) + "\n"
                           for r in c["rows"]).encode("utf-8")
    return None


def _policy(run_dir: Path, policy: str | None, reference: str | None, first: int, s: settings.TraceSettings,
            audit_dir: Path, rows_: list[int], info: dict[int, dict[str, Any]], device: str, precision: str,
            log: Callable[[str], None]) -> dict[str, Any]:
    """Score the rows with a checkpoint from before the failure as policy (DPO logit when a reference is known)."""
    chosen: str | None = policy
    note = "given with --policy" if policy else ""
    if chosen is None:
        before = [(st, p) for st, p in _checkpoints(run_dir) if st < first]
        if not before:
            return {"computed": False, "reason": f"no checkpoint-N with N < {first} (the first failing step) in "
                                                 f"{run_dir}; pass --policy CHECKPOINT"}
        st, p = before[-1]
        chosen, note = str(p), f"the last checkpoint before step {first} (step {st})"
    try:
        from pairaudit.io.pairs import load_pairs

        pairs = load_pairs(audit_dir, rows_)
        scores = explain.dpo_scores(pairs, policy=chosen, reference=reference, beta=s.beta, tokenizer=s.tokenizer,
                                    max_length=s.max_length, truncation_mode=s.truncation_mode, device=device,
                                    precision=precision, log=log)
    except PairauditError as exc:
        return {"computed": False, "policy": chosen, "reason": str(exc).splitlines()[0]}
    for r, d in scores.items():
        info[r]["dpo"] = d
    out = {"computed": True, "policy": chosen, "why": note, "reference": reference, "beta": s.beta,
           "precision": precision, "rows_scored": len(scores)}
    if reference is None:
        out["reason"] = "no --reference (the model the run started from): policy log-probs only, no DPO logit"
    zs = np.array([d["logit"] for d in scores.values() if isinstance(d.get("logit"), float)])
    if len(zs):
        out["median_abs_logit"] = round(float(np.median(np.abs(zs))), 4)
    return out
