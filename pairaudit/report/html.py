"""``report.html``: a self-contained page (no network; one inline script, allowed by its hash, pages and
filters the table of flagged rows: :mod:`pairaudit.report.table`) built from an output folder.

``render_report(out_dir)`` reads report.json, findings.parquet and scores.parquet, loads the text of
the example rows (:func:`pairaudit.outputs.reader.load_pairs`) and writes ``OUT/report.html`` atomically.
The same folder always gives the same bytes. Needs ``pairaudit[report]`` (jinja2; matplotlib for the
plots: without it the page is rendered without plots and says so).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import jinja2  # noqa: F401 - ImportError here lets the pipeline fall back to the plain report
from markupsafe import Markup

from pairaudit.datatypes import Pair
from pairaudit.output_files import DECISIONS_FILE, REPORT_HTML
from pairaudit.outputs.folder import owner_folder
from pairaudit.outputs.reader import OutputFolder
from pairaudit.outputs.single import committed_file, refresh_record
from pairaudit.report.trainer_view import trainer_tokenizer, trainer_view
from pairaudit.report.view import ReportFolder
from pairaudit.stages.near_duplicates.infos import NO_RESPONSE_REACHED, UNREAD_SPACES

PROMPT_LIMIT = 1500  # characters of the prompt shown per example
SIDE_LIMIT = 4000  # characters per response shown per example
GROUP_MEMBERS = 4  # rows shown per duplicate/contradiction group besides the representative
_METRICS = (("prompt_tokens", "prompt tok"), ("chosen_tokens", "chosen tok"), ("rejected_tokens", "rejected tok"),
            ("ref_margin", "ref margin"), ("likely_flipped_score", "flip score"))


def render_report(out_dir: str | Path, *, max_examples: int = 5) -> Path:
    """Write ``out_dir/report.html`` (atomically) and return its path."""
    folder = ReportFolder.open(out_dir)
    html = build_html(folder, max_examples=max_examples)
    link = folder.path / REPORT_HTML
    # outputs are links into the committed generation (pairaudit.outputs.folder): replace the file there, never
    # a file the link leads to outside it
    target = committed_file(folder.path, REPORT_HTML)
    fd, tmp = tempfile.mkstemp(prefix=".report.html.", suffix=".tmp", dir=target.parent)
    try:
        # a lone surrogate in dataset text (legal in JSON, not in UTF-8) shows as its escape, \udc00
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as fh:
            fh.write(html)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    refresh_record(folder.path, REPORT_HTML)
    return link


def build_html(folder: OutputFolder, *, max_examples: int = 5) -> str:
    from pairaudit.report import plots
    from pairaudit.report.flip_section import flip_lines
    from pairaudit.report.review_line import review_line
    from pairaudit.report.template import CSP, CSS, environment

    if not isinstance(folder, ReportFolder):  # read in bounded memory, whatever the folder's size
        folder = ReportFolder.open(folder.path)
    report = folder.report
    try:
        plots_or_none: list[dict[str, str]] | None = plots.all_plots(folder.summary)
    except ImportError:  # matplotlib missing: render without plots
        plots_or_none = None
    checks = _check_rows(folder)
    examples_rows: set[int] = set()
    plans = {c["name"]: _plan_examples(folder, c["name"], max_examples) for c in checks}
    for plan in plans.values():
        for item in plan["items"]:
            examples_rows.update(item if isinstance(item, list) else [item])
    folder.prefetch(examples_rows)
    pairs = folder.pairs(examples_rows) if examples_rows else {}
    tok, trainer_note = trainer_tokenizer(folder.report) if any(
        p.chosen is not None or p.pretokenized for p in pairs.values()) else (None, "")
    for c in checks:
        plan = plans[c["name"]]
        c["grouped"] = plan["grouped"]
        c["more_rows"] = plan["more_rows"]
        c["examples"] = [_group_example(folder, pairs, c["name"], item, plan["sizes"].get(item[0], 0), tok)
                         if isinstance(item, list) else pair_context(folder, pairs.get(item), item, c["name"],
                                                                     trainer=tok)
                         for item in plan["items"]]
    totals = {k: report.get("totals", {}).get(k, "?") for k in ("input", "kept", "dropped", "flagged")}
    source = {k: (report.get("source") or {}).get(k) for k in ("path", "kind", "format")}
    from pairaudit.report import table

    data = table.table_data(folder)
    ctx = {
        "csp": CSP.replace("base-uri", f"script-src {table.script_hash(table.SCRIPT)}; base-uri"),
        "css": CSS,
        "version": report.get("pairaudit_version", "?"),
        "source": source,
        "source_name": Path(str(source["path"] or folder.path)).name,
        "totals": totals,
        "checks": [c for c in checks if c["status"] != "off"],
        "off": [c["name"] for c in checks if c["status"] == "off"],
        "not_run": [c for c in checks if c["status"] in ("skipped", "failed")],
        "problems": [str(p) for p in report.get("problems") or []],
        "decisions": _decisions(folder),
        "decision_summary": _decision_summary(report.get("decisions")),
        "models": _pretty(report.get("models")) if report.get("models") else "",
        "config": _pretty(report.get("config") or {}),
        "profile": profile_rows(folder),
        "assumptions": assumption_rows(report),
        "remedies": list((report.get("remedies") or {}).items()),
        "digest": _digest(checks),
        "flip_lines": flip_lines(report),
        "review_line": review_line(report, folder.path),
        "plots": plots_or_none,
        "trainer_note": trainer_note,
        "table": {"total": data.get("all", len(data["rows"])), "listed": len(data["rows"]),
                  "first": table.first_page(data), "snippet": data["snippet"],
                  "json": Markup(table.data_json(data)), "script": Markup(table.SCRIPT)},
    }
    from pairaudit.report.trace_section import add_trace_section

    return add_trace_section(environment().get_template("report.html").render(ctx), folder.path)


def _digest(checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The report's first view, counted as the terminal summary counts: checks that dropped rows, checks
    that flagged rows (in the scan's check order, the review queue's), and the checks that found none."""
    from pairaudit.report.summary import by_action

    ran = [c for c in checks if c["status"] == "ran"]
    parts = [(action, part) for c in ran for action, part in by_action(c)]
    return {"dropped": [p for a, p in parts if a == "drop"], "flagged": [p for a, p in parts if a == "flag"],
            "none": [c["name"] for c in ran if not c["rows"]]}


def assumption_rows(report: dict[str, Any]) -> list[tuple[str, str]]:
    """The tokenizer / trainer / limits every length figure assumed, as (label, value) rows."""
    from pairaudit.report.summary import assumption_lines

    return [(k, v) for k, _, v in (line.partition(": ") for line in assumption_lines(report))]


def _pretty(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _check_rows(folder: ReportFolder) -> list[dict[str, Any]]:
    out = []
    for name, info in folder.checks.items():
        sub = None
        if "findings" not in info or "rows" not in info or not info.get("action"):  # older folders: count them
            sub = folder.check_findings(name)
        actions = sorted(set(sub["action"].drop_nulls().to_list())) if sub is not None else []
        out.append({
            "name": name,
            "description": info.get("description") or "",
            "status": info.get("status") or "ran",
            "reason": info.get("reason") or "",
            "action": info.get("action") or (actions[0] if len(actions) == 1 else "/".join(actions)) or "",
            "findings": info["findings"] if "findings" in info else sub.height,
            "rows": info["rows"] if "rows" in info else sub["row"].n_unique(),
            "kept": info.get("kept", info["rows"] if "rows" in info else sub["row"].n_unique()),
            **({"dropped": info["dropped"]} if "dropped" in info else {}),
            "thresholds": json.dumps(info["thresholds"], sort_keys=True) if info.get("thresholds") else "",
        })
    return out


def _plan_examples(folder: ReportFolder, check: str, max_examples: int) -> dict[str, Any]:
    """Which rows to show: top-scored rows, or the largest groups (representative row first). Lazy queries:
    what is held is per group (grouped checks) or a few times ``max_examples`` findings."""
    import polars as pl

    plan: dict[str, Any] = {"grouped": False, "items": [], "more_rows": 0, "sizes": {}}
    lf = folder.lazy_findings
    if lf is None or max_examples <= 0:
        return plan
    lf = lf.filter(pl.col("check") == check)
    grouped = lf.filter(pl.col("group").is_not_null())
    sizes = grouped.group_by("group").agg(pl.col("row").n_unique().alias("n")).collect()
    if sizes.height:
        plan["grouped"] = True
        top = sizes.sort(["n", "group"], descending=[True, False]).head(max_examples)
        members = (grouped.filter(pl.col("group").is_in(top["group"].to_list())).group_by("group")
                   .agg(pl.col("row").unique().sort().alias("rows")).collect())
        rows_of = dict(zip(members["group"].to_list(), members["rows"].to_list()))
        for g in top["group"].to_list():
            others = [r for r in rows_of[g] if r != g]
            plan["items"].append([g, *others[:GROUP_MEMBERS]])
            plan["sizes"][g] = len(others)
        plan["more_rows"] = max(0, sizes.height - max_examples)
        return plan
    head = (lf.select("row", "score").sort(["score", "row"], descending=[True, False], nulls_last=True)
            .head(4 * max_examples).collect())  # a row has at most one finding per field: 4 a row
    if head.height == 0:
        return plan
    ranked = (head.group_by("row").agg(pl.col("score").max())
              .sort(["score", "row"], descending=[True, False], nulls_last=True))
    plan["items"] = ranked["row"].head(max_examples).to_list()
    info = folder.checks.get(check, {})
    n_rows = info["rows"] if "rows" in info else lf.select(pl.col("row").n_unique()).collect().item()
    plan["more_rows"] = max(0, int(n_rows) - max_examples)
    return plan


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _group_example(folder: OutputFolder, pairs: dict[int, Pair], check: str, rows: list[int],
                   n_members: int, tok: Any = None) -> dict[str, Any]:
    head = pair_context(folder, pairs.get(rows[0]), rows[0], check, role="representative", trainer=tok)
    members = [pair_context(folder, pairs.get(r), r, check, role=f"in group of row {rows[0]}", trainer=tok)
               for r in rows[1:]]
    return {"head": head, "members": members, "more": max(0, n_members - len(members))}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def pair_context(folder: OutputFolder, pair: Pair | None, row: int, check: str | None = None,
                 role: str = "", trainer: Any = None,
                 limits: tuple[int, int] = (PROMPT_LIMIT, SIDE_LIMIT), diff: bool = True) -> dict[str, Any]:
    """Template context of one pair (escaping happens in the template / diff module). With a
    ``trainer`` tokenizer (``report.trainer_view.trainer_tokenizer``) it also holds the pair as the
    trainer sees it after truncation."""
    from pairaudit.report.diff import elide, segments_html, word_diff

    findings = folder.row_findings(row)
    if check is not None:  # the section's own check first
        findings.sort(key=lambda f: (f["check"] != check, f["check"], f["field"] or ""))
    scores = folder.row_scores(row)
    ctx: dict[str, Any] = {
        "row": row, "role": role, "findings": findings, "similarity": None, "missing": "",
        "metrics": [(label, _fmt(scores[k])) for k, label in _METRICS if k in scores],
        "prompt": "", "chosen_html": "", "rejected_html": "", "chosen_len": None, "rejected_len": None,
        "trainer": trainer_view(trainer, pair),
    }
    if pair is None:
        ctx["missing"] = "text not available (the source could not be read for this row)"
        return ctx
    if pair.chosen is None or pair.rejected is None:
        if pair.ids:
            lens = ", ".join(f"{k}: {len(v)}" for k, v in sorted(pair.ids.items()))
            ctx["missing"] = f"pre-tokenized pair, no text ({lens})"
        else:
            raw = pair.notes.get("raw", "") if pair.notes else ""
            ctx["missing"] = "malformed record" + (f": {elide(raw, 600)[0]}" if raw else "")
        return ctx
    ctx["prompt"] = elide(pair.prompt or "", limits[0])[0]
    chosen, _ = elide(pair.chosen, limits[1])
    rejected, _ = elide(pair.rejected, limits[1])
    if diff:
        left, right, ratio = word_diff(chosen, rejected)
    else:  # listed rows: plain escaped text (the word diff costs ~3 ms a pair)
        left, right, ratio = [("same", chosen)], [("same", rejected)], None
    ctx.update(chosen_html=segments_html(left), rejected_html=segments_html(right), similarity=ratio,
               chosen_len=len(pair.chosen), rejected_len=len(pair.rejected))
    return ctx


def _decisions(folder: OutputFolder) -> list[dict[str, Any]]:
    path = owner_folder(folder.path) / DECISIONS_FILE
    if not path.exists():
        return []
    from pairaudit.decisions import load_decisions

    return [{"row": d.row, "decision": d.decision, "note": d.note}
            for d in sorted(load_decisions(path).values(), key=lambda d: d.row)]


def _decision_summary(dec: Any) -> dict[str, Any] | None:
    """report.json ``decisions`` ({"total", "applied", "ignored": [{row, decision, reason}], "flipped"})."""
    if not isinstance(dec, dict) or not dec.get("total"):
        return None
    ignored = [i for i in dec.get("ignored") or [] if isinstance(i, dict)]
    return {"total": dec.get("total", 0), "applied": dec.get("applied", 0),
            "flipped": ", ".join(str(r) for r in dec.get("flipped") or []),
            "ignored": [{"row": i.get("row"), "decision": i.get("decision"), "reason": i.get("reason", "")}
                        for i in ignored]}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def profile_rows(folder: ReportFolder) -> list[tuple[str, str]]:
    """Key numbers about the dataset, as (label, value) rows (from streamed score summaries)."""
    s = folder.summary
    rows: list[tuple[str, str]] = []
    src = folder.report.get("source") or {}
    rows.append(("format", f"{src.get('format') or '?'} ({src.get('kind') or '?'})"))
    if s is None:
        rows.append(("per-row metrics", "scores.parquet missing"))
        return rows
    rows.append(("records", str(s.n)))
    for side in ("prompt", "chosen", "rejected"):
        col = f"{side}_tokens"
        if s.has(col):
            rows.append((f"{side} tokens", f"median {s.median(col):.0f}, p95 {s.quantile(col, 95):.0f}, "
                                           f"max {s.hi[col]:.0f}"))
    longer, shorter = s.longer, s.shorter
    decided = longer + shorter
    if decided:
        rows.append(("length bias", f"chosen longer in {_pct(longer / decided)} of pairs with unequal "
                                    f"length ({longer} vs {shorter}); a 'pick the longer' rule agrees "
                                    f"with the labels that often"))
    if s.has("length_ratio"):
        rows.append(("median chosen/rejected length ratio", f"{s.median('length_ratio'):.2f}"))
    if s.has("near_identical_pair_score"):
        frac = s.above[("near_identical_pair_score", ">=", 0.9)] / s.finite["near_identical_pair_score"]
        rows.append(("within-pair character similarity", f"median {s.median('near_identical_pair_score'):.2f}; "
                                                          f"≥ 0.9 in {_pct(float(frac))}"))
    if s.has("pair_cosine"):
        rows.append(("within-pair embedding cosine", f"median {s.median('pair_cosine'):.2f}"))
    if s.has("ref_margin"):
        frac = s.above[("ref_margin", "<", 0.0)] / s.finite["ref_margin"]
        rows.append(("reference margin", f"median {s.median('ref_margin'):.2f}; rejected preferred by the reference "
                                         f"model in {_pct(float(frac))}"))
    if s.sampled and any(s.has(c) for c in ("length_ratio", "near_identical_pair_score", "pair_cosine", "ref_margin")):
        from pairaudit.report.view import SAMPLE_ROWS

        rows.append(("medians of the metrics above", f"from a seeded sample of {SAMPLE_ROWS:,} of {s.n:,} rows; "
                                                     "token figures, counts and plots use every row"))
    rows += multipair_rows(folder.report.get("stats") or {})
    return rows


def multipair_rows(stats: dict) -> list[tuple[str, str]]:
    """Pairs and responses per prompt (preference graph stage) and the near-duplicate copy threshold."""
    rows: list[tuple[str, str]] = []
    g = stats.get("preference_graph") or {}
    if g:
        pp, rp = g["pairs_per_prompt"], g["responses_per_prompt"]
        rows.append(("pairs per prompt", f"{g['prompts']} prompts; mean {pp['mean']:.2f}, median {pp['median']:g}, "
                                         f"max {pp['max']}; {g['rows_sharing_a_prompt']} rows share a prompt"))
        rows.append(("responses per prompt", f"mean {rp['mean']:.2f}, median {rp['median']:g}, max {rp['max']} "
                                             f"(distinct texts)"))
    cal = (stats.get("near_duplicates") or {}).get("calibration") or {}
    if cal:
        note = f"; {cal['note']}" if cal.get("note") else ""
        if cal.get("space") in UNREAD_SPACES:  # hybrid mode: every candidate pair turned down before it
            note += ("; no decision read it (no candidate pair's responses reached the floors)"
                     if cal["space"] == NO_RESPONSE_REACHED else "; no decision read it (no candidate pair reached "
                     "the responses)")
        rows.append(("near-duplicate copy threshold",
                     f"each response >= {cal['min_response']:.3f} (unsure band from {cal['min_response_flag']:.3f}: "
                     f"flagged), calibrated {cal['calibrated_on']} on pairs of different answers: "
                     f"{cal['negatives_within_rows']} within rows, {cal['negatives_across_rows']} across rows sharing "
                     f"a prompt; vectors: {cal['space']}{note}"))
    nd = stats.get("near_duplicates") or {}
    tfm = nd.get("transformer") or {}
    if tfm.get("texts"):
        rest = " (the static model decided the rest)" if nd.get("mode") == "hybrid" else ""
        rows.append(("near-duplicate transformer",
                     f"compared {tfm['texts']:,} texts{rest}; {tfm['texts_cut']:,} longer than its "
                     f"{tfm['max_tokens']} tokens, read from their start"))
    return rows
