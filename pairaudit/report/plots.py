"""Histograms for the report as deterministic, self-contained SVG ``data:`` URIs.

matplotlib is imported lazily. Figures are built with ``matplotlib.figure.Figure`` (no pyplot global
state); SVG output is made byte-stable with a fixed ``svg.hashsalt`` and no ``Date`` metadata, and
text is kept as text (``svg.fonttype = none``) so no font data or external font is embedded.
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from pairaudit.report.view import ScoreSummary

_COLORS = {"prompt": "#7f7f7f", "chosen": "#2c7fb8", "rejected": "#d95f0e"}


def _finite(scores: pl.DataFrame | None, column: str) -> Any:
    """Finite values of a numeric column (as a numpy array; empty when absent or non-numeric)."""
    import numpy as np
    import polars as pl

    if scores is None or column not in scores.columns:
        return np.empty(0)
    try:
        values = scores[column].cast(pl.Float64, strict=False).drop_nulls().to_numpy()
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError):
        return np.empty(0)
    return values[np.isfinite(values)]


def _bars(ax: Any, edges: Any, counts: Any, **kw: Any) -> None:
    """A histogram drawn from its counts: the same figure as ``ax.hist`` of the values themselves."""
    ax.hist(edges[:-1], bins=edges, weights=counts, **kw)


def _edges(lo: float, hi: float, bins: int = 40) -> Any:
    """``np.histogram``'s bin edges for values from ``lo`` to ``hi``."""
    import numpy as np

    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, bins + 1, endpoint=True)


def _figure(width: float = 6.4, height: float = 2.8) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    fig.set_layout_engine("constrained")
    return fig


def _to_data_uri(fig: Any, salt: str) -> str:
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": f"pairaudit-{salt}", "svg.fonttype": "none",
                                "font.family": "sans-serif"}):
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _style(ax: Any, xlabel: str, title: str) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel("pairs")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3)


def token_lengths(s: ScoreSummary | None) -> str | None:
    """Overlaid histograms of prompt/chosen/rejected token lengths (log-spaced bins when wide)."""
    import numpy as np

    sides = [side for side in ("prompt", "chosen", "rejected") if s is not None and s.has(f"{side}_tokens")]
    if s is None or not sides:
        return None
    lo = max(1.0, min(s.lo[f"{side}_tokens"] for side in sides))
    hi = max(s.hi[f"{side}_tokens"] for side in sides)
    log = hi / lo > 50
    bins = np.geomspace(lo, hi + 1, 40) if log else np.linspace(0, hi + 1, 40)
    fig = _figure()
    ax = fig.add_subplot()
    for side in sides:
        counts = s.histogram(f"{side}_tokens", bins, transform=(lambda v: np.maximum(v, lo)) if log else None)
        _bars(ax, bins, counts, histtype="step", linewidth=1.6,
              label=f"{side} (median {s.median(f'{side}_tokens'):.0f})", color=_COLORS[side])
    if log:
        ax.set_xscale("log")
    ax.legend(frameon=False, fontsize=8)
    _style(ax, "tokens" + (" (log scale)" if log else ""), "Token lengths")
    return _to_data_uri(fig, "token_lengths")


def length_ratio(s: ScoreSummary | None) -> str | None:
    """Histogram of log2(chosen/rejected tokens): mass right of 0 means chosen tends to be longer."""
    import numpy as np

    if s is None or not s.has("length_ratio") or not np.isfinite(s.ratio_lo):
        return None
    edges = _edges(float(np.log2(s.ratio_lo)), float(np.log2(s.ratio_hi)))
    counts = s.histogram("length_ratio", edges, transform=np.log2, keep=lambda v: v > 0)
    fig = _figure()
    ax = fig.add_subplot()
    _bars(ax, edges, counts, color="#6a51a3", alpha=0.85)
    ax.axvline(0.0, color="black", linewidth=1, linestyle="--")
    _style(ax, "log2(chosen tokens / rejected tokens)", "Length bias: chosen vs rejected length")
    return _to_data_uri(fig, "length_ratio")


def similarity(s: ScoreSummary | None) -> str | None:
    """Within-pair similarity: character similarity and embedding cosine, when present."""
    import numpy as np

    series = {label: col for label, col in (("character similarity", "near_identical_pair_score"),
                                            ("embedding cosine", "pair_cosine")) if s is not None and s.has(col)}
    if s is None or not series:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    lo = min(0.0, min(s.lo[c] for c in series.values()))
    bins = np.linspace(lo, 1.0, 41)
    for (label, col), color in zip(series.items(), ("#31a354", "#756bb1"), strict=False):
        _bars(ax, bins, s.histogram(col, bins), histtype="stepfilled", alpha=0.45, label=label, color=color)
    ax.legend(frameon=False, fontsize=8)
    _style(ax, "similarity of chosen and rejected", "Within-pair similarity")
    return _to_data_uri(fig, "similarity")


def histogram(s: ScoreSummary | None, column: str, xlabel: str, title: str,
              vline: float | None = None) -> str | None:
    if s is None or not s.has(column):
        return None
    edges = _edges(s.lo[column], s.hi[column])
    fig = _figure()
    ax = fig.add_subplot()
    _bars(ax, edges, s.histogram(column, edges), color="#3182bd", alpha=0.85)
    if vline is not None:
        ax.axvline(vline, color="black", linewidth=1, linestyle="--")
    _style(ax, xlabel, title)
    return _to_data_uri(fig, column)


def all_plots(scores: ScoreSummary | None) -> list[dict[str, str]]:
    """Every plot the data allows, in a fixed order: [{"id", "title", "uri", "caption"}]."""
    specs = [
        ("token_lengths", "Token lengths", lambda: token_lengths(scores),
         "Tokens per side under the scan's tokenizer."),
        ("length_ratio", "Length bias", lambda: length_ratio(scores),
         "Right of the dashed line: chosen longer than rejected. A strong skew means a model can learn "
         "'longer is better' from this data."),
        ("similarity", "Within-pair similarity", lambda: similarity(scores),
         "Pairs near 1.0 give DPO almost no signal."),
        ("ref_margin", "Reference margin",
         lambda: histogram(scores, "ref_margin", "log p(chosen) - log p(rejected) under the reference model",
                           "Reference log-prob margin", vline=0.0),
         "Left of 0: the reference model prefers the rejected response."),
        ("likely_flipped", "Likely flipped",
         lambda: histogram(scores, "likely_flipped_score", "likely_flipped_score", "Likely-flipped score"),
         "Higher means more evidence that rejected is the better response."),
        ("dpo_overflow", "DPO logit risk",
         lambda: histogram(scores, "dpo_overflow_risk_score", "dpo_overflow_risk_score", "DPO overflow risk"),
         "Pairs with extreme DPO logits saturate the sigmoid."),
    ]
    out = []
    for pid, title, make, caption in specs:
        uri = make()
        if uri:
            out.append({"id": pid, "title": title, "uri": uri, "caption": caption})
    return out
