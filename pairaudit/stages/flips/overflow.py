"""``dpo_overflow_risk``: pairs whose DPO logit or summed log-probs break half precision.

Risk in [0, 1] is the largest ratio of a measured quantity to its limit, capped at 1: the DPO logit
against ln(65504) (with a policy), the bf16 rounding noise of the summed log-probs against
``noise_limit``, the fp16 range, outlier per-token margins (robust SDs) and near-impossible tokens.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pairaudit.checks.base import CheckInfo

LN_FP16_MAX = math.log(65504.0)  # 11.09: exp() of anything larger overflows float16
FP16_TINY_LOGP = math.log(2.0 ** -24)  # -16.64: smallest float16 subnormal; p below it is 0 in fp16

DPO_OVERFLOW_INFO = CheckInfo(
    "dpo_overflow_risk",
    "pairs whose DPO logit (with --policy: the real one at --beta) or whose summed log-probs are extreme enough to "
    "overflow, saturate or lose the margin in fp16/bf16; without a policy only what the reference model supports: "
    "half-precision rounding of the log-prob sums, outlier margins and near-impossible tokens",
    "flag",
    summary="extreme DPO logit (fp16/bf16)",
    kind="global",
    extra="models",
    default_enabled=False,
    thresholds={"threshold": 1.0, "logit_limit": round(LN_FP16_MAX, 3), "noise_limit": 0.5,
                "margin_mad_limit": 10.0, "token_logp_limit": -25.0},
    why="these pairs train fine with a numerically stable loss in fp32; flagging shows where half-precision "
        "training or a naive loss would break, and extreme pairs are often broken data",
)


def half_ulp(x: np.ndarray, mantissa_bits: int) -> np.ndarray:
    """Largest rounding error of ``x`` stored with ``mantissa_bits`` explicit bits (bf16: 7, fp16: 10)."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    _, e = np.frexp(x)  # x = m * 2**e, m in [0.5, 1)
    return np.where(x > 0, np.ldexp(1.0, e - 2 - mantissa_bits), 0.0)


def robust_scale(x: np.ndarray, floor: float) -> float:
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return floor
    return max(float(1.4826 * np.median(np.abs(x - np.median(x)))), floor)


def margin_center(mean_margin: np.ndarray) -> tuple[float, float]:
    """Median and robust scale of the per-token reference margins (what an outlier margin is measured from)."""
    m = mean_margin
    return float(np.nanmedian(m)) if np.isfinite(m).any() else 0.0, robust_scale(m, 0.05)


def overflow_risk(P: dict[str, Any], col: dict[str, np.ndarray], mean_margin: np.ndarray, z: np.ndarray,
                  beta: float, have_policy: bool, center: tuple[float, float] | None = None):
    """Risk score in [0, 1]: the largest ratio of a measured quantity to its limit, capped at 1; ``center``:
    the margins' median and scale (default: of these rows, ``margin_center``)."""
    lc, lr = col["ref_logp_chosen"], col["ref_logp_rejected"]
    if have_policy:
        pc, pr = col["policy_logp_chosen"], col["policy_logp_rejected"]
        noise = beta * (half_ulp(pc, 7) + half_ulp(lc, 7) + half_ulp(pr, 7) + half_ulp(lr, 7))
        r_logit = np.abs(z) / float(P["logit_limit"])
    else:  # at step 0 the policy is the reference: each side's sum is rounded twice
        noise = beta * 2 * (half_ulp(lc, 7) + half_ulp(lr, 7))
        r_logit = np.zeros_like(lc)
    r_noise = noise / float(P["noise_limit"])
    r_range = np.maximum(np.abs(lc), np.abs(lr)) / 65504.0
    m = mean_margin
    med, s = center if center is not None else margin_center(m)
    r_margin = np.abs(m - med) / (s * float(P["margin_mad_limit"]))
    mins = np.fmin(col["ref_min_logp_chosen"], col["ref_min_logp_rejected"])
    r_token = mins / float(P["token_logp_limit"])
    parts = {"logit": r_logit, "noise": r_noise, "range": r_range, "margin": r_margin, "token": r_token}
    stack = np.vstack(list(parts.values()))
    with np.errstate(invalid="ignore"):
        risk = np.where(np.isfinite(lc), np.minimum(np.nanmax(np.where(np.isfinite(stack), stack, 0), 0), 1.0),
                        np.nan)

    def details(i: int) -> str:
        out = []
        if parts["logit"][i] >= 1:
            out.append(f"DPO logit {z[i]:+.2f} at beta={beta:g}: |z| >= {P['logit_limit']:g} = ln(65504), "
                       "exp(|z|) overflows fp16 and sigmoid(z) is saturated in fp16 and bf16")
        if parts["noise"][i] >= 1:
            out.append(f"bf16 rounding of the summed log-probs ({lc[i]:.0f}, {lr[i]:.0f}) moves the DPO logit "
                       f"by up to {noise[i]:.2f} (limit {P['noise_limit']:g})")
        if parts["range"][i] >= 1:
            out.append("a summed log-prob exceeds the fp16 range (65504)")
        if parts["margin"][i] >= 1:
            out.append(f"outlier reference per-token margin {m[i]:+.2f} nats (median {med:+.2f}, "
                       f"> {P['margin_mad_limit']:g} robust SDs)")
        if parts["token"][i] >= 1:
            out.append(f"a token the reference gives log-prob {mins[i]:.1f} (< {P['token_logp_limit']:g}; p is 0 "
                       f"in fp16 below {FP16_TINY_LOGP:.1f}, so a naive log(softmax) gives -inf)")
        src = "policy" if have_policy else "reference only (no --policy)"
        return f"dpo_overflow_risk {risk[i]:.2f} [{src}]: " + "; ".join(out)

    return risk, details
