"""What ``likely_flipped`` found, in the same words for the terminal, report.json and report.html.

report.json holds the stage's verdict under ``stats.likely_flipped``; these lines are rendered from it,
so the three outputs cannot disagree. Never a mean score presented as a flip rate.
"""

from __future__ import annotations

from typing import Any

SIGNAL_ORDER = ("embedding", "length", "reference", "probe", "reward", "policy")


def flip_lines(report: dict[str, Any]) -> list[str]:
    """``label evidence: ...`` lines, or [] when likely_flipped did not run."""
    st = (report.get("stats") or {}).get("likely_flipped")
    check = (report.get("checks") or {}).get("likely_flipped") or {}
    if not isinstance(st, dict) or check.get("status") != "ran":
        return []
    lines = [f"label evidence (likely_flipped): {st.get('verdict', 'unknown')}"]
    per = st.get("rows_per_signal") or {}
    if per:
        parts = [f"{s} {per[s]:,}" for s in SIGNAL_ORDER if s in per]
        ref = st.get("reference") or {}
        why = "" if per.get("reference") else f" (reference model {ref.get('rows', 'not run')})"
        fitted = st.get("fitted_on")  # --engine ray above fit_sample_rows: the verdict and counts are the sample's
        lines.append(("rows scored per signal in the fitting sample: " if fitted else "rows scored per signal: ")
                     + ", ".join(parts) + why)
        if fitted:
            lines.append(f"model fitted on {fitted}")
    if st.get("status") == "informative":
        rate = st.get("estimated_flip_rate")
        if rate is None:
            lines.append("estimated flip rate: unknown (" + str(st.get("estimated_flip_rate_note", "weak evidence"))
                         + ")")
        w = st.get("weights") or {}
        if w:
            top = sorted(w.items(), key=lambda kv: -abs(kv[1]))[:4]
            lines.append("strongest features (standardised weight; + = higher on the preferred side): "
                         + ", ".join(f"{k} {v:+.2f}" for k, v in top))
    return lines
