"""Why the run died and what to change, in order: five causes, each with the evidence for and against it.

Everything comes from the run folder (``trainer_state.json``'s ``log_history``, the arguments, the checkpoints)
and what the trace found about the failing window's rows:

- **data**: a row of the window with a non-finite or fp16-range DPO logit under the checkpoint before the
  failure, or a drop finding more common in the window than in the run -> drop those rows (the exact
  ``pairaudit scan ... --decisions`` command) and resume from the last good checkpoint;
- **learning_rate**: the failure at or just after the end of warmup (``warmup_steps`` / ``warmup_ratio``, or the
  logged ``learning_rate`` reaching its peak), at a schedule restart (the logged rate rising again), or
  ``grad_norm`` / ``loss`` climbing over the logged steps before it -> a longer warmup and the peak rate cut to
  the last rate that trained cleanly;
- **precision**: ``fp16`` on, the window's DPO logits beyond ln(65504) = 11.09, the fp16 loss scale
  (``scaler.pt`` of the checkpoints, read by :mod:`pairaudit.trace.checkpoints`) growing before the failure,
  gradient accumulation in fp16 -> ``bf16=True`` (where the hardware has it);
- **amplifier**: DPO ``beta`` and the largest |logit| of the window -> the beta that keeps it below ~8;
  ``max_grad_norm`` off or large -> ``max_grad_norm=1.0``;
- **broken_weights**: a checkpoint whose weights (``*.safetensors``, read with safetensors) hold non-finite
  values the starting model (``--reference``) did not; taken before the failure showed it is the cause (the run
  went on from broken weights), after it a consequence -> restart from the last checkpoint with finite weights
  (named). Only the checkpoints around the failure are read: the first after it, and from the last before it
  back to the last finite one.

A cause is ``supported`` (score > 0, evidence for it), ``ruled_out`` (evidence against it and none for it) or
``unsupported`` (nothing in the run speaks to it: said so, not guessed). Causes are ranked by score; the fixes
of the supported causes with a score of at least ``MIN_FIX_SCORE`` follow that order.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pairaudit.output_files import TRACE_DROPS
from pairaudit.trace.checkpoints import checkpoints_health
from pairaudit.trace.explain import LN_FP16_MAX
from pairaudit.trace.fixcmd import read_report, scan_command

#: learning rates and DPO betas people train with (the diagnosis says how far a run's value is from them)
USUAL_LR = {"trl-dpo": (5e-7, 5e-6, "DPO"), "transformers": (1e-6, 2e-4, "fine-tuning")}
USUAL_BETA = (0.01, 0.5)
SAFE_LOGIT = 8.0  # target |beta * margin| after a beta change: well inside fp16's exp range
MIN_FIX_SCORE = 0.2  # weaker evidence is shown, but its fixes are not in the list to try
CAUSES = ("data", "learning_rate", "precision", "amplifier", "broken_weights")


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _count(v: Any) -> int | None:
    """A positive whole number as read from a run's files (``max_steps``), else None (absent, -1, damaged)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _nice_down(x: float) -> float:
    """The largest of 1, 2, 3, 5 x 10^k not above ``x`` (a value a person would type)."""
    if x <= 0:
        return x
    k = math.floor(math.log10(x))
    for m in (5, 3, 2, 1):
        if m * 10.0 ** k <= x * (1 + 1e-9):
            return float(f"{m * 10.0 ** k:.3g}")
    return float(f"{10.0 ** k:.3g}")


def _cause(name: str) -> dict[str, Any]:
    return {"cause": name, "score": 0.0, "for": [], "against": [], "fixes": [], "verdict": "unsupported"}


def _log(log_history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in log_history if isinstance(e, dict) and isinstance(e.get("step"), int)
            and not any(str(k).startswith(("eval_", "test_")) for k in e) and "train_runtime" not in e]


def _warmup_end(args: dict[str, Any], max_steps: int | None) -> int | None:
    ws, wr = args.get("warmup_steps"), args.get("warmup_ratio")
    if _finite(ws) and ws >= 1:
        return int(ws)
    ratio = ws if _finite(ws) and 0 < ws < 1 else wr if _finite(wr) and wr > 0 else None
    if ratio and max_steps:
        return math.ceil(ratio * max_steps)
    return 0 if (ws is not None or wr is not None) else None


#: the arguments the diagnosis reads: one absent from the run's arguments is the installed trainer's default
DIAGNOSED_ARGS = ("max_grad_norm", "fp16", "bf16", "warmup_steps", "warmup_ratio", "gradient_accumulation_steps",
                  "beta", "learning_rate")


def trainer_defaults(given: dict[str, Any] | None = None,
                     trainer: str | None = None) -> tuple[dict[str, Any], str | None]:
    """What the installed trainer (TRL's ``DPOConfig``, else transformers' ``TrainingArguments``) uses for each of
    :data:`DIAGNOSED_ARGS` that ``given`` (the run's arguments) lacks, and where the values come from; ({}, None)
    when neither is installed (an absent setting is then unknown, never "off").

    The config is built as the trainer builds it, with the run's own values, so a default resolved at run time
    comes out as the run had it: TRL's ``bf16=None`` is ``not fp16`` (bf16 unless the run asked for fp16). Where
    that cannot be built, only the declared defaults that are values (not None) are used.

    Args:
        given: the run's arguments (only the diagnosed ones are passed on).
        trainer: the run's trainer as the trace settled it (``transformers``: TrainingArguments' defaults, not
            DPOConfig's; None or ``trl-dpo``: DPOConfig first).

    Returns:
        (defaults by name, where they come from).
    """
    import importlib

    classes = [("trl", "DPOConfig"), ("transformers", "TrainingArguments")]
    for mod, cls in classes[1:] if trainer == "transformers" else classes:
        try:
            module = importlib.import_module(mod)
            klass = getattr(module, cls)
        except Exception:  # noqa: BLE001, S112 - not installed, or broken: try the next
            continue
        where = f"the default of the installed {mod} {getattr(module, '__version__', '?')} {cls}"
        resolved = _resolved(klass, given or {})
        if resolved is not None:
            return resolved, where
        return _declared(klass), where
    return {}, None


def _declared(klass: type) -> dict[str, Any]:
    """The dataclass defaults of :data:`DIAGNOSED_ARGS` that are values (a None is resolved at run time)."""
    import dataclasses

    fields = {f.name: f.default for f in dataclasses.fields(klass) if f.default is not dataclasses.MISSING}
    return {k: fields[k] for k in DIAGNOSED_ARGS if k in fields and fields[k] is not None}


def _resolved(klass: type, given: dict[str, Any]) -> dict[str, Any] | None:
    """:data:`DIAGNOSED_ARGS` of ``klass`` built with the run's values of them (on the CPU, so no hardware check
    refuses it), or None when it cannot be built."""
    import dataclasses
    import tempfile
    import warnings

    names = {f.name for f in dataclasses.fields(klass)}
    kw = {k: v for k, v in given.items() if k in DIAGNOSED_ARGS and k in names}
    try:
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            built = klass(output_dir=tmp, use_cpu=True, report_to="none", **kw)
    except Exception:  # noqa: BLE001 - a value of the run's the class refuses: the declared defaults then
        return None
    return {k: getattr(built, k) for k in DIAGNOSED_ARGS if getattr(built, k, None) is not None}


def with_defaults(args: dict[str, Any], trainer: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """``args`` with each diagnosed argument it lacks set to the installed trainer's value for it (resolved with
    the run's other values), and for each of those where the value came from. Arguments that were not read at
    all ({}) stay unknown."""
    if not args:
        return args, {}
    missing = [k for k in DIAGNOSED_ARGS if k not in args]
    if not missing:
        return args, {}
    defaults, where = trainer_defaults(args, trainer)
    added = {k: defaults[k] for k in missing if k in defaults}
    return {**args, **added}, {k: f"{k} is absent from the run's arguments: {where} ({v})" for k, v in added.items()}


def diagnose(*, run_dir: Path, state: dict[str, Any] | None, args: dict[str, Any], args_source: str | None,
             window: tuple[int, int] | None, trace_doc: dict[str, Any], data: str, out_dir: Path,
             reference: str | None = None) -> dict[str, Any]:
    if window is None:
        return {"status": "no_failure", "summary": "no failure: no logged value is non-finite or jumps, so there is "
                                                  "nothing to diagnose", "causes": [], "fixes": []}
    first, last = window
    log = _log((state or {}).get("log_history") or [])
    ckpts = checkpoints_health(run_dir, reference, first)
    args, defaulted = with_defaults(args, ((trace_doc.get("settings") or {}).get("values") or {}).get("trainer"))
    start_checked = reference is not None and Path(reference).is_dir() and any(Path(reference).glob("*.safetensors"))
    ctx = {"first": first, "last": last, "log": log, "args": args, "ckpts": ckpts, "doc": trace_doc,
           "defaulted": defaulted, "start_checked": start_checked,
           "max_steps": _count((state or {}).get("max_steps")) or _count(args.get("max_steps"))}
    causes = [_data(ctx, data, out_dir), _learning_rate(ctx), _precision(ctx), _amplifier(ctx), _weights(ctx)]
    if not args:
        for c in causes:
            if c["cause"] in ("learning_rate", "precision", "amplifier"):
                c["note"] = ("the run's arguments were not read (no training_args.bin / .json, or refused): "
                             "warmup, fp16, beta and clipping unknown")
    for c in causes:
        c["score"] = round(min(c["score"], 1.0), 2)
        c["verdict"] = "supported" if c["score"] > 0 else "ruled_out" if c["against"] else "unsupported"
    causes.sort(key=lambda c: (-c["score"], CAUSES.index(c["cause"])))
    fixes: list[str] = []
    for c in causes:
        if c["verdict"] == "supported" and c["score"] >= MIN_FIX_SCORE:
            fixes += [f for f in c["fixes"] if f.split(" (")[0] not in {x.split(" (")[0] for x in fixes}]
    top = causes[0] if causes[0]["verdict"] == "supported" and fixes else None
    summary = (f"most likely cause: {top['cause'].replace('_', ' ')} ({top['for'][0]}); first fix: "
               f"{fixes[0].split('   #')[0]}" if top else _no_cause(causes))
    return {"status": "failure", "window": [first, last], "arguments_from": args_source, "checkpoints": ckpts,
            "causes": causes, "fixes": fixes, "top": top["cause"] if top else None, "summary": summary}


def _no_cause(causes: list[dict[str, Any]]) -> str:
    """The summary when no cause is strong enough to fix: each cause named once, with its verdict."""
    weak = [c["cause"] for c in causes if c["verdict"] == "supported"]
    rest = [f"{c['cause']}: {c['verdict'].replace('_', ' ')}" for c in causes if c["verdict"] != "supported"]
    head = (f"no cause is clearly supported by the run's files (weak evidence only: {', '.join(weak)})" if weak
            else "no cause is supported by the run's files")
    return head + ("; " + "; ".join(rest) if rest else "")


def _data(ctx: dict[str, Any], data: str, out_dir: Path) -> dict[str, Any]:
    c = _cause("data")
    doc = ctx["doc"]
    if doc.get("status") == "unreliable":
        c["note"] = "the failing window's rows could not be named reliably (see the first line): not judged"
        return c
    rows = [r for r in doc.get("rows") or [] if r.get("window") == "failing"]
    culprits, suspects = doc.get("culprits") or [], doc.get("suspects") or []
    nonfinite = [r["row"] for r in rows if r["row"] in culprits and r.get("evidence") == 4]
    if nonfinite and 2 * len(nonfinite) > len(rows):
        c["against"].append(f"{len(nonfinite)} of the window's {len(rows)} rows are non-finite under "
                            f"{(doc.get('policy') or {}).get('policy')}: the model, not a few rows")
        return c
    if nonfinite:
        c["score"] = 0.9
        c["for"].append(f"row(s) {', '.join(map(str, nonfinite))} of the failing window give a non-finite "
                        "log-prob / DPO logit (every other row finite)")
    elif culprits:
        c["score"] = 0.6
        c["for"].append(f"row(s) {', '.join(map(str, culprits))} have a DPO logit beyond the fp16 range")
    drop = [r for r in rows if r["row"] in suspects and any(x.startswith("drop findings") for x in r["reasons"])]
    if drop:
        c["score"] = max(c["score"], 0.5)
        c["for"].append("drop findings rarer in the run than in the failing window: " + "; ".join(
            f"row {r['row']}: {next(x for x in r['reasons'] if x.startswith('drop findings'))[15:]}" for r in drop[:3]))
    named = sorted(set(culprits) | {r["row"] for r in drop})
    if named:
        decisions = out_dir / TRACE_DROPS
        c["rows"] = named
        c["decisions"] = str(decisions)
        cmd = scan_command(data, decisions, read_report(doc.get("audit")))
        c["fixes"].append(f"{cmd}   # the audit's settings; writes CLEAN_DIR/clean.* without source row(s) "
                          f"{', '.join(map(str, named))} (and every other drop finding); train on it")
        good = _last_finite_ckpt(ctx, before=ctx["first"])
        if good:
            c["fixes"].append(f"resume_from_checkpoint={good} (the last checkpoint before the failure)")
    elif (doc.get("policy") or {}).get("computed") and rows:
        mx = (doc.get("comparison") or {}).get("failing", {}).get("max_abs_logit")
        c["against"].append(f"no row of the failing window stands out: {len(rows)} rows, every DPO logit finite"
                            + (f" (max |logit| {mx})" if mx is not None else "") + ", no drop finding more common "
                            "than in the run")
    elif rows and not any(r.get("findings") for r in rows):
        c["against"].append("no finding on the window's rows (their DPO logits were not computed: no checkpoint "
                            "before the failure, or no --reference)")
    return c


def _last_finite_ckpt(ctx: dict[str, Any], *, before: int) -> str | None:
    good = [k for k in ctx["ckpts"] if k["step"] < before and k.get("weights_finite", True)]
    return good[-1]["path"] if good else None


def _series(log: list[dict[str, Any]], key: str, upto: int) -> list[tuple[int, float]]:
    return [(e["step"], float(e[key])) for e in log if e["step"] < upto and _finite(e.get(key))]


def _learning_rate(ctx: dict[str, Any]) -> dict[str, Any]:
    c = _cause("learning_rate")
    first, last, log, args = ctx["first"], ctx["last"], ctx["log"], ctx["args"]
    lrs = _series(log, "learning_rate", last + 1)
    warm = _warmup_end(args, ctx["max_steps"])
    # the schedule's peak: the configured rate (the logged values may stop short of it) or the largest logged
    peak = max([v for _, v in lrs] + ([float(args["learning_rate"])] if _finite(args.get("learning_rate")) else []),
               default=None)
    span = f"step {last}" if first == last else f"steps {first}-{last}"
    if warm:
        near = warm <= last + 1 and first <= warm + max(5, warm // 2, last - first + 1)
        if near:
            c["score"] += 0.6
            c["for"].append(f"the failure ({span}) comes right at the end of warmup (warmup ends at step "
                            f"{warm})" + (f", at the peak learning rate {peak:g}" if peak else ""))
        else:
            c["against"].append(f"the failure ({span}) is not at the end of warmup (step {warm})")
    elif warm == 0 and first <= 20:
        c["score"] += 0.1
        c["for"].append(f"no warmup, and the run failed early (step {last})")
    far = _lr_range(c, ctx, peak, lrs, warm)
    restarts = [s for (s0, v0), (s, v) in zip(lrs, lrs[1:]) if v > v0 * 1.05 and (warm is None or s > warm)]
    if restarts and first - restarts[-1] <= max(10, last - first + 1):
        c["score"] += 0.4
        c["for"].append(f"the learning rate rose again at step {restarts[-1]} (a schedule restart) just before the "
                        "failure")
    climb = _climb(log, first)
    if climb:
        c["score"] += 0.3
        c["for"].append(climb)
    elif len(_series(log, "grad_norm", first)) >= 5:
        c["against"].append("grad_norm did not climb over the logged steps before the failure")
    if far is not None:
        c["fixes"].append(far)
    if c["score"] > 0:
        ok = [v for s, v in lrs if s < first]
        safe = _nice_down(min(ok[-1], (peak or ok[-1]) / 2) if ok else (peak or 0) / 2) if (ok or peak) else None
        longer = max(2 * (warm or 0), math.ceil(0.1 * (ctx["max_steps"] or 0)), 10)
        if safe and far is None:
            c["fixes"].append(f"learning_rate={safe:g} (the peak was {peak:g}"
                              + (f"; {ok[-1]:g} at the last step before the failure" if ok else "") + ")")
        c["fixes"].append(f"warmup_steps={longer} (was {warm if warm is not None else 'unknown'})")
    return c


def _lr_range(c: dict[str, Any], ctx: dict[str, Any], peak: float | None, lrs: list[tuple[int, float]],
              warm: int | None) -> str | None:
    """Evidence from how far the peak rate is above the usual range; the fix that brings it back (or None)."""
    trainer = ((ctx["doc"].get("settings") or {}).get("values") or {}).get("trainer")
    lo, hi, what = USUAL_LR.get(trainer, USUAL_LR["transformers"])
    if str(ctx["args"].get("optim") or "").startswith("sgd"):  # the usual ranges are those of Adam-like optimizers
        return None
    if not peak or peak <= 2 * hi:
        if peak:
            where = "below" if peak < lo else "within"
            c["against"].append(f"learning_rate {peak:g} is {where} the usual {what} range {lo:g}..{hi:g}")
        return None
    at = next((s for s, v in lrs if v >= peak * (1 - 1e-9)), None)
    times = peak / hi
    c["score"] += 0.6 if times >= 10 else 0.3
    c["for"].insert(0, f"learning_rate {peak:g}: about " + (f"10^{round(math.log10(times))}" if times >= 10 else
                                                           f"{times:.1f}") + f" x the usual {what} range "
                    f"{lo:g}..{hi:g}" + (f", peak reached at step {at}" if at is not None else "")
                    + (" with no warmup" if warm == 0 else f" after {warm} warmup steps" if warm else ""))
    return f"learning_rate={hi:g} (was {peak:g}: the top of the usual {what} range {lo:g}..{hi:g})"


def _climb(log: list[dict[str, Any]], first: int) -> str | None:
    for key in ("grad_norm", "loss"):
        vals = _series(log, key, first)
        if len(vals) < 5:
            continue
        earlier = sorted(v for _, v in vals[:-3])
        base = earlier[len(earlier) // 2]
        tail = [v for _, v in vals[-3:]]
        if base > 0 and tail[-1] > 3 * base and tail == sorted(tail):
            return (f"{key} climbed before the failure: {', '.join(f'{v:.3g}' for v in tail)} at steps "
                    f"{', '.join(str(s) for s, _ in vals[-3:])} against a median of {base:.3g} before")
    return None


def _precision(ctx: dict[str, Any]) -> dict[str, Any]:
    c = _cause("precision")
    args, doc = ctx["args"], ctx["doc"]
    fp16, bf16 = bool(args.get("fp16")), bool(args.get("bf16"))
    if args and not fp16:
        why = f"; {ctx['defaulted']['bf16']}" if "bf16" in ctx.get("defaulted", {}) else ""
        c["against"].append("fp16 was off (" + ("bf16" if bf16 else "fp32") + f" training{why})")
    if fp16:
        c["score"] += 0.3
        c["for"].append("fp16=True: activations and the loss in half precision (largest value 65504)")
    mx = ((doc.get("comparison") or {}).get("failing") or {}).get("max_abs_logit")
    if _finite(mx) and fp16:  # (in bf16 the exponent range is fp32's: a large logit is the amplifier's)
        if mx >= LN_FP16_MAX:
            c["score"] += 0.3
            c["for"].append(f"the failing window's largest |DPO logit| is {mx:.2f} >= ln(65504) = {LN_FP16_MAX:.2f}")
        else:
            c["against"].append(f"the failing window's DPO logits stay within fp16's range (max |logit| {mx:.2f})")
    scales = [(k["step"], k["loss_scale"]) for k in ctx["ckpts"] if "loss_scale" in k and k["step"] <= ctx["last"]]
    if len(scales) >= 2 and scales[-1][1] > scales[0][1]:
        c["score"] += 0.3
        c["for"].append("the fp16 loss scale grew before the failure: " + ", ".join(
            f"{v:g} at checkpoint-{s}" for s, v in scales[-4:]))
    elif len(scales) >= 2:
        c["against"].append(f"the fp16 loss scale did not grow ({scales[0][1]:g} -> {scales[-1][1]:g})")
    ga = args.get("gradient_accumulation_steps")
    if fp16 and isinstance(ga, int) and ga > 1:
        c["score"] += 0.1
        c["for"].append(f"gradients accumulated over {ga} micro-batches before the fp16 unscale")
    if c["score"] > 0:
        c["fixes"].append("bf16=True, fp16=False (on hardware with bf16: Ampere or newer GPUs, TPUs, recent CPUs)")
    return c


def _amplifier(ctx: dict[str, Any]) -> dict[str, Any]:
    c = _cause("amplifier")
    args, doc = ctx["args"], ctx["doc"]
    beta = args.get("beta", (doc.get("settings") or {}).get("values", {}).get("beta"))
    mx = ((doc.get("comparison") or {}).get("failing") or {}).get("max_abs_logit")
    if _finite(beta) and _finite(mx) and mx > 0:
        if mx >= SAFE_LOGIT:
            new = _nice_down(beta * SAFE_LOGIT / mx)
            c["score"] += 0.5 if mx >= LN_FP16_MAX else 0.3
            c["for"].append(f"beta={beta:g} makes the window's largest |logit| {mx:.2f}")
            c["fixes"].append(f"beta={new:g} (was {beta:g}: keeps that logit at {mx * new / beta:.1f})")
        else:
            c["against"].append(f"beta={beta:g} keeps the window's logits small (max |logit| {mx:.2f})")
    if _finite(beta) and beta > 2 * USUAL_BETA[1]:
        c["score"] += 0.6 if beta >= 10 * USUAL_BETA[1] else 0.2
        c["for"].append(f"beta={beta:g}: {beta / USUAL_BETA[1]:.3g} x the top of the usual DPO range "
                        f"{USUAL_BETA[0]:g}..{USUAL_BETA[1]:g} (the DPO logit and its gradient scale with beta)")
        if not c["fixes"]:
            c["fixes"].append(f"beta=0.1 (was {beta:g})")
    mgn = args.get("max_grad_norm")  # absent: the installed trainer's default (with_defaults), or unknown
    why = f" ({ctx['defaulted']['max_grad_norm']})" if "max_grad_norm" in ctx.get("defaulted", {}) else ""
    if args and (_finite(mgn) and (mgn <= 0 or mgn > 10)) or (args and "max_grad_norm" in args and mgn is None):
        c["score"] += 0.3
        c["for"].append(("gradient clipping is off" if not mgn or mgn <= 0 else f"max_grad_norm={mgn:g} clips little")
                        + why)
        c["fixes"].append("max_grad_norm=1.0")
    elif _finite(mgn):
        c["against"].append(f"gradients were clipped (max_grad_norm={mgn:g}){why}")
    return c


def _weights(ctx: dict[str, Any]) -> dict[str, Any]:
    c = _cause("broken_weights")
    ck = [k for k in ctx["ckpts"] if "weights_finite" in k]
    bad = [k for k in ck if not k["weights_finite"]]
    if not ck:
        return c
    names = ", ".join("checkpoint-" + str(k["step"]) for k in ck)
    if not bad:
        c["against"].append(f"no checkpoint holds non-finite weights the starting model did not already have ({names})"
                            if ctx.get("start_checked") else f"every checkpoint's weights are finite ({names})")
        return c
    k = bad[0]
    good = [g for g in ck if g["weights_finite"] and g["step"] < k["step"]]
    what = f"checkpoint-{k['step']} holds non-finite weights ({k['n_nonfinite']} of {k['n_tensors']} tensors)"
    if k["step"] < ctx["first"] and not ctx.get("start_checked") and not good:
        # unknown start: weights non-finite from the start are in every checkpoint too, and then a row reaching
        # them is what fails; the starting model tells the two apart
        c["score"] = 0.5
        c["for"].append(what + ", saved before the failure; the starting model was not checked, so these values "
                        "may have been there from the start (then the rows that reach them are the trigger)")
        c["fixes"].append("pass --reference with the model the run started from: it tells whether the run broke the "
                          "weights or started with them")
        return c
    if k["step"] < ctx["first"]:  # checkpoint-N holds the weights after step N's update
        c["score"] = 0.95
        c["for"].append(what + f", saved before the failure showed at steps {ctx['first']}-{ctx['last']}: training "
                        "went on from broken weights")
    else:
        c["score"] = 0.2
        c["for"].append(what + ", saved after the failure: a consequence, not the cause (do not resume from it)")
    c["fixes"].append(f"resume_from_checkpoint={good[-1]['path']} (the last checkpoint with finite weights)"
                      if good else "restart from the initial model: no checkpoint has finite weights")
    return c
