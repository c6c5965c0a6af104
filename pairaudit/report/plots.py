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


def token_lengths(scores: pl.DataFrame | None) -> str | None:
    """Overlaid histograms of prompt/chosen/rejected token lengths (log-spaced bins when wide)."""
    import numpy as np

    data = {side: _finite(scores, f"{side}_tokens") for side in ("prompt", "chosen", "rejected")}
    data = {k: v for k, v in data.items() if len(v)}
    if not data:
        return None
    lo = max(1.0, min(min(v) for v in data.values()))
    hi = max(max(v) for v in data.values())
    log = hi / lo > 50
    bins = np.geomspace(lo, hi + 1, 40) if log else np.linspace(0, hi + 1, 40)
    fig = _figure()
    ax = fig.add_subplot()
    for side, values in data.items():
        ax.hist(np.maximum(values, lo) if log else values, bins=bins, histtype="step", linewidth=1.6,
                label=f"{side} (median {np.median(values):.0f})", color=_COLORS[side])
    if log:
        ax.set_xscale("log")
    ax.legend(frameon=False, fontsize=8)
    _style(ax, "tokens" + (" (log scale)" if log else ""), "Token lengths")
    return _to_data_uri(fig, "token_lengths")


def length_ratio(scores: pl.DataFrame | None) -> str | None:
    """Histogram of log2(chosen/rejected tokens): mass right of 0 means chosen tends to be longer."""
    import numpy as np

    ratios = _finite(scores, "length_ratio")
    ratios = ratios[ratios > 0]
    if not len(ratios):
        return None
    values = np.log2(ratios)
    fig = _figure()
    ax = fig.add_subplot()
    ax.hist(values, bins=40, color="#6a51a3", alpha=0.85)
    ax.axvline(0.0, color="black", linewidth=1, linestyle="--")
    _style(ax, "log2(chosen tokens / rejected tokens)", "Length bias: chosen vs rejected length")
    return _to_data_uri(fig, "length_ratio")


def similarity(scores: pl.DataFrame | None) -> str | None:
    """Within-pair similarity: character similarity and embedding cosine, when present."""
    import numpy as np

    series = {
        "character similarity": _finite(scores, "near_identical_pair_score"),
        "embedding cosine": _finite(scores, "pair_cosine"),
    }
    series = {k: v for k, v in series.items() if len(v)}
    if not series:
        return None
    fig = _figure()
    ax = fig.add_subplot()
    lo = min(0.0, min(min(v) for v in series.values()))
    bins = np.linspace(lo, 1.0, 41)
    for (label, values), color in zip(series.items(), ("#31a354", "#756bb1"), strict=False):
        ax.hist(values, bins=bins, histtype="stepfilled", alpha=0.45, label=label, color=color)
    ax.legend(frameon=False, fontsize=8)
    _style(ax, "similarity of chosen and rejected", "Within-pair similarity")
    return _to_data_uri(fig, "similarity")


def histogram(scores: pl.DataFrame | None, column: str, xlabel: str, title: str,
              vline: float | None = None) -> str | None:
    values = _finite(scores, column)
    if not len(values):
        return None
    fig = _figure()
    ax = fig.add_subplot()
    ax.hist(values, bins=40, color="#3182bd", alpha=0.85)
    if vline is not None:
        ax.axvline(vline, color="black", linewidth=1, linestyle="--")
    _style(ax, xlabel, title)
    return _to_data_uri(fig, column)


def all_plots(scores: pl.DataFrame | None) -> list[dict[str, str]]:
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
