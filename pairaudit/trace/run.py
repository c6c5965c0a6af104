"""``pairaudit trace RUN_DIR --data SOURCE``: the failing step, its rows, and what is wrong with them.

:func:`trace` runs four phases, each a function of its own:

1. :func:`read_run`: the run folder's files, the settings (:mod:`~pairaudit.trace.settings`) and the analysis of
   ``log_history`` (:mod:`~pairaudit.trace.history`);
2. :func:`failing_window`: the first failure (non-finite, a jump, a collapse; the recording callback's events
   give the exact step) and the window before it;
3. :func:`window_rows`: the rows of those steps, from the callback's record or reconstructed for each dataset
   the run may have trained on (:mod:`~pairaudit.trace.dataset`: the source or the audit's clean output;
   :mod:`~pairaudit.trace.rows` for the trainer's filter, :mod:`~pairaudit.trace.order` for the order) and
   checked against the run's logs (:mod:`~pairaudit.trace.verify`); a trace that cannot be checked is unreliable;
4. :func:`explain_rows`: the scan's findings (the scan runs into the output folder unless ``--audit`` names
   one), TRL token lengths after truncation and, with a checkpoint from before the failure (or the starting
   model), the policy's log-probs and the DPO logit (:mod:`~pairaudit.trace.explain`).

Then the diagnosis (:mod:`~pairaudit.trace.diagnose`), ``trace.json`` and the trace section of ``report.html``
(:mod:`~pairaudit.trace.render`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.errors import ConfigError, InputError, PairauditError
from pairaudit.output_files import REPORT_JSON
from pairaudit.report.terminal import echo
from pairaudit.trace import dataset, explain, history, record, rows, settings, verify
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


def _vocab_size(run_dir: Path) -> int | None:
    """The model's vocabulary (``config.json`` of a checkpoint): entropy at ln(vocabulary) is a collapse."""
    for _, ckpt in _checkpoints(run_dir):
        try:
            v = json.loads((ckpt / "config.json").read_text(encoding="utf-8")).get("vocab_size")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(v, int) and v > 1:
            return v
    return None


def _default_tokenizer(run_dir: Path, s: settings.TraceSettings) -> None:
    if s.tokenizer is not None:
        return
    for _, ckpt in reversed(_checkpoints(run_dir)):
        if (ckpt / "tokenizer_config.json").exists():
            s.set("tokenizer", str(ckpt), f"{ckpt.name} (the run's saved tokenizer)")
            return
    s.notes.append("no training tokenizer found in the run folder: lengths and row filters use the bundled "
                   "SmolLM2 tokenizer (pass --set tokenizer=PATH)")


#: arguments only a DPO trainer's config has: the run's arguments name the trainer even when its logs were lost
DPO_ARGS = ("beta", "loss_type", "rpo_alpha", "reference_free", "precompute_ref_log_probs")


def _trainer_kind(s: settings.TraceSettings, hist: history.History | None) -> None:
    if s.trainer != "auto":
        return
    args = s.run_args or {}
    if "DPOConfig" in str(args.get("_class", "")) or any(k in args for k in DPO_ARGS):
        s.set("trainer", "trl-dpo", "inferred from the run's arguments (a DPOConfig: "
              + ", ".join(k for k in ("_class", *DPO_ARGS) if k in args)[:80] + ")")
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
        if not (audit / REPORT_JSON).exists():
            raise InputError(f"--audit {audit} holds no report.json", fix="run `pairaudit scan` into it first")
        return audit
    from pairaudit.api import scan

    prev = out / REPORT_JSON
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


@dataclass
class RunFiles:
    """What the run folder holds: the record (when used), ``trainer_state.json``, the settings, the log analysis."""

    run_dir: Path
    table: record.StepTable | None
    meta: dict[str, Any] | None
    events: list[dict[str, Any]]
    state: dict[str, Any] | None
    state_path: Path | None
    s: settings.TraceSettings
    hist: history.History | None


def read_run(run_dir: Path, *, use_record: bool, step: int | None, settings_file: str | Path | None,
             assignments: dict[str, Any] | None, trust_pickle: bool, jump_z: float) -> RunFiles:
    """Phase 1: the run folder's files, the settings they give and the analysis of ``log_history``."""
    if not run_dir.is_dir():
        raise InputError(f"run folder {run_dir} does not exist", fix="pass the trainer's output_dir")
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
    hist = history.analyse(state.get("log_history") or [], state_path=state_path, jump_z=jump_z,
                           vocab_size=_vocab_size(run_dir)) if state else None
    _trainer_kind(s, hist)
    _default_tokenizer(run_dir, s)
    return RunFiles(run_dir, table, meta, events, state, state_path, s, hist)


@dataclass
class Window:
    """The failing window ``first..last`` (optimizer steps), the event that names it, and the window before."""

    event: history.Event
    first: int
    last: int
    prev: tuple[int, int] | None

    @property
    def lo(self) -> int:
        return self.prev[0] if self.prev else self.first


def failing_window(run: RunFiles, step: int | None) -> Window | None:
    """Phase 2: the first failure (the record's exact step, else ``log_history``), or the ``--step`` asked for."""
    if step is not None:
        event = history.Event("chosen", int(step), int(step), {}, f"step {step} chosen with --step", source="--step")
    else:
        candidates = [e for e in (_record_event(run.events), run.hist.event if run.hist else None) if e is not None]
        if not candidates:
            return None
        event = min(candidates, key=lambda e: (e.step, e.step - e.first_step))
    first, last = event.first_step, event.step
    if event.source == "log_history" and run.hist is not None:
        prev = run.hist.previous_window(first)
    else:
        width = last - first + 1
        prev = (max(1, first - width), first - 1) if first > 1 else None
    return Window(event, first, last, prev)


def _common(run: RunFiles, data: str) -> dict[str, Any]:
    h = run.hist
    return {"run_dir": str(run.run_dir), "data": data, "settings": run.s.to_json(),
            "log_history": str(run.state_path) if run.state_path else None,
            "first_nonfinite": h.first_nonfinite.to_json() if h and h.first_nonfinite else None,
            "first_jump": h.first_jump.to_json() if h and h.first_jump else None,
            "first_collapse": h.first_collapse.to_json() if h and h.first_collapse else None}


def window_rows(run: RunFiles, w: Window, inp: dataset.DataInput, lengths: rows.TokenLengths | None
                ) -> tuple[record.StepTable, dict[str, Any], np.ndarray]:
    """Phase 3: the rows of the window and the one before (recorded, or reconstructed and checked)."""
    cands = dataset.candidates(inp, run.s, lengths)
    t = run.table
    have = t is not None and len(t) and set(range(w.lo, w.last + 1)) <= set(t.steps.tolist())
    if have:
        steps, order_info = _recorded(t, run.meta, cands, w.lo, w.last)
    else:
        steps, order_info = _reconstructed(run.run_dir, cands, run.s, run.hist, run.state, lengths, w.last, w.lo)
        if t is not None and len(t):
            order_info["checks"].append("the record does not cover these steps: the order was reconstructed")
    order_info["data"] = inp.to_json()
    trainer_rows = np.asarray(order_info.pop("_rows"), dtype=np.int64)
    if not len(steps.select(w.first, w.last)):
        raise ConfigError(f"no rows for steps {w.first}-{w.last}: the run has fewer steps with these settings",
                          fix="check the settings listed by `pairaudit trace --json` (max_steps, batch size...)")
    return steps, order_info, trainer_rows


def explain_rows(run: RunFiles, w: Window, steps: record.StepTable, source: str, audit_dir: Path,
                 lengths: rows.TokenLengths | None, order_info: dict[str, Any]
                 ) -> tuple[dict[int, dict[str, Any]], list[int], list[int]]:
    """Phase 4: each row's findings, token counts, text and the non-finite outputs the callback recorded."""
    in_window = sorted({int(r) for r in steps.select(w.first, w.last).data["row"] if r >= 0})
    before = sorted({int(r) for r in steps.select(w.lo, w.first - 1).data["row"] if r >= 0}) if w.prev else []
    all_rows = sorted(set(in_window) | set(before))
    findings = explain.audit_findings(audit_dir, all_rows)
    info: dict[int, dict[str, Any]] = {r: {"findings": findings.get(r, [])} for r in all_rows}
    if lengths is None:
        try:
            lengths = rows.token_lengths(source, run.s)
        except PairauditError as exc:
            order_info["checks"].append(f"token lengths not computed: {exc}")
    for r in all_rows:
        if lengths is not None:
            info[r]["tokens"] = lengths.lookup(r)
    for r, rec in explain.read_records(source, in_window).items():
        if rec.data is not None:
            info[r]["text"] = {k: explain.excerpt(rec.data.get(k)) for k in ("prompt", "chosen", "rejected")
                               if k in rec.data}
    for ev in run.events:
        if not isinstance(ev.get("step"), int) or not w.first <= ev["step"] <= w.last:
            continue  # after a non-finite update every row's output is non-finite: only the window counts
        for seq in ev.get("sequences") or []:
            if seq.get("row") in info:
                info[seq["row"]].setdefault("recorded", []).append({"step": ev.get("step"), "side": seq.get("side")})
    return info, in_window, before


def trace(run_dir: str | Path, data: str | Path, *, out: str | Path | None = None, audit: str | Path | None = None,
          settings_file: str | Path | None = None, assignments: dict[str, Any] | None = None,
          trust_pickle: bool = False, use_record: bool = True, step: int | None = None,
          policy: str | None = None, reference: str | None = None, device: str = "auto",
          precision: str = "fp32", jump_z: float = 10.0, skip: list[str] | None = None,
          render_html: bool = True, log: Callable[[str], None] | None = None) -> TraceResult:
    """Trace a training run that failed (a non-finite value, a jump by orders of magnitude, a collapse) back to
    the source rows of the failing steps; writes ``OUT/trace.json``, ``OUT/trace-drop.jsonl`` (+ report.html).

    Args:
        run_dir: the trainer's output folder (``trainer_state.json``, checkpoints, the recorder's record).
        data: the dataset the run trained on: the audit's source or its cleaned output.
        out: where trace.json goes (default: ``audit``, else ``RUN_DIR/pairaudit-trace``).
        audit: the ``pairaudit scan`` output folder of that data (findings, row mapping, the fix command).
        settings_file / assignments / trust_pickle: the run's settings when the run folder lacks them.
        use_record: use the recording callback's record of each step's rows when present.
        step: trace this step instead of the first failing one.
        policy / reference: models that score the culprit rows (default: the checkpoint before the failure).
        device / precision: where and how they run.
        jump_z: how far a logged value must jump above its running median to count as a failure.
        skip: causes not to consider.
        render_html: also add the trace section to ``OUT/report.html``.
        log: receives messages.

    Returns:
        A ``TraceResult``: ``doc`` (trace.json as a dict: ``status`` "traced" / "unreliable" / "no_failure",
        the failing step, its source rows, the checks against the run's logs, the diagnosis and fixes in order)
        and ``out_dir``.

    Example:
        >>> from pairaudit.trace.run import trace
        >>> res = trace("run", data="pairs.jsonl", audit="audit")  # doctest: +SKIP
        >>> res.doc["status"], res.doc["event"]["step"], res.doc["rows"]  # doctest: +SKIP
    """
    from pairaudit.trace.render import build_doc, write_outputs

    log = log or (lambda m: echo(f"pairaudit: {m}", err=True))
    run_dir, data = Path(run_dir), str(data)
    out_dir = Path(out) if out is not None else Path(audit) if audit is not None else run_dir / "pairaudit-trace"
    run = read_run(run_dir, use_record=use_record, step=step, settings_file=settings_file, assignments=assignments,
                   trust_pickle=trust_pickle, jump_z=jump_z)
    s, common = run.s, _common(run, data)
    w = failing_window(run, step)
    if w is None:
        common["last_logged_step"] = run.hist.entries[-1]["step"] if run.hist and run.hist.entries else None
        doc = build_doc(status="no_failure", common=common)
        drops = _diagnose(doc, run_dir, run.state, s, None, data, out_dir, reference)
        write_outputs(doc, out_dir, drops, render_html=render_html)
        return TraceResult(doc, out_dir)
    inp = dataset.resolve_input(data, Path(audit) if audit else None)
    lengths = rows.token_lengths(inp.source, s) if s.trainer == "trl-dpo" else None
    steps, order_info, trainer_rows = window_rows(run, w, inp, lengths)
    common["reliability"] = verify.assess(s, order_info,
                                          inside_epoch=int(order_info.get("epochs_compared_inside_an_epoch", 0)))
    span = (w.first, w.last)
    if not common["reliability"]["reliable"]:
        doc = build_doc(status="unreliable", common=common, event=w.event, window=span, prev=w.prev,
                        order_info=order_info)
        drops = _diagnose(doc, run_dir, run.state, s, span, inp.source, out_dir, reference)
        write_outputs(doc, out_dir, drops, render_html=render_html)
        return TraceResult(doc, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    audit_dir = _scan_audit(inp.source, out_dir, s, inp.audit, skip or [], log)
    info, in_window, before = explain_rows(run, w, steps, inp.source, audit_dir, lengths, order_info)
    policy_info = _policy(run_dir, policy, reference, w.first, s, audit_dir, sorted(info), info, device, precision,
                          log)
    doc = build_doc(status="found", common=common, event=w.event, window=span, prev=w.prev, steps=steps,
                    order_info=order_info, info=info, window_rows=in_window, prev_rows=before, policy=policy_info,
                    audit=str(audit_dir), run_rates=explain.finding_rates(audit_dir, trainer_rows))
    drops = _diagnose(doc, run_dir, run.state, s, span, inp.source, out_dir, reference)
    write_outputs(doc, out_dir, drops, render_html=render_html)
    return TraceResult(doc, out_dir)


def _recorded(table: record.StepTable, meta: dict[str, Any] | None, cands: list[dataset.Candidate], lo: int,
              last: int) -> tuple[record.StepTable, dict[str, Any]]:
    """The steps as the callback recorded them; trainer indices mapped with the candidate of the recorded length."""
    n_meta = (meta or {}).get("dataset_length")
    cand = next((c for c in cands if len(c.rows) == n_meta), cands[0])
    sel = table.select(lo, last)
    info: dict[str, Any] = {"source": "recorded by PairauditCallback", "checks": [], "trainer_rows": len(cand.rows),
                            "trainer_dataset": cand.name, "_rows": cand.rows}
    if n_meta is not None and n_meta != len(cand.rows) and (sel.data["row"] < 0).any():
        info["checks"].append(f"the trainer dataset had {n_meta} rows, pairaudit's emulation of the trainer's filter "
                              f"keeps {len(cand.rows)}: trainer indices may map to the wrong source rows (record "
                              "source rows with add_pairaudit_callback)")
    return sel.with_rows(cand.rows), info


def _reconstructed(run_dir: Path, cands: list[dataset.Candidate], s: settings.TraceSettings,
                   hist: history.History | None, state: dict[str, Any] | None, lengths: rows.TokenLengths | None,
                   last: int, lo: int) -> tuple[record.StepTable, dict[str, Any]]:
    """Each candidate dataset's order, checked against the run's logs; the one they fit."""
    restarts = sorted({*s.resumed_at, *(st for st, _ in _checkpoints(run_dir))})
    recs = [verify.reconstruct(c, s, hist=hist, state=state, lengths=lengths, last=last, single=len(cands) == 1,
                               restarts=restarts) for c in cands]
    best, open_choice = verify.choose(recs)
    info: dict[str, Any] = {"source": "reconstructed", "schedule": best.sched.to_json(), "checks": list(open_choice),
                            "trainer_rows": len(best.candidate.rows), "trainer_dataset": best.candidate.name,
                            "verification": best.checks, "epochs_compared_inside_an_epoch": best.inside_epoch,
                            "candidates": [r.summary() for r in recs], "_rows": best.candidate.rows}
    return best.steps.select(lo, last), info


def _diagnose(doc: dict[str, Any], run_dir: Path, state: dict[str, Any] | None, s: settings.TraceSettings,
              window: tuple[int, int] | None, data: str, out_dir: Path, reference: str | None) -> bytes | None:
    """Add the diagnosis (why the run died, what to change); returns the drop decisions it refers to (the
    content of ``trace-drop.jsonl``), or None."""
    from pairaudit.trace.diagnose import diagnose

    diag = diagnose(run_dir=run_dir, state=state, args=s.run_args, args_source=s.run_args_source, window=window,
                    trace_doc=doc, data=data, out_dir=out_dir, reference=reference)
    doc["diagnosis"] = diag
    from pairaudit.trace.fixcmd import earlier_decisions, read_report

    for c in diag.get("causes") or []:
        if c.get("decisions") and c.get("rows"):
            return earlier_decisions(read_report(doc.get("audit"))) + "".join(json.dumps({"row": r, "decision": "drop", "note": "pairaudit trace: row of the failing "
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
        if not before and reference is None:
            return {"computed": False, "reason": f"no checkpoint-N with N < {first} (the first failing step) in "
                                                 f"{run_dir}; pass --policy CHECKPOINT"}
        if before:
            st, p = before[-1]
            chosen, note = str(p), f"the last checkpoint before step {first} (step {st})"
        else:  # the weights the run started from: a row non-finite under them is non-finite for the run too
            chosen, note = reference, f"the starting model (--reference): no checkpoint before step {first}"
            reference = None  # policy == reference: log-probs only, a DPO logit of 0 would say nothing
    try:
        from pairaudit.outputs.reader import load_pairs

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
