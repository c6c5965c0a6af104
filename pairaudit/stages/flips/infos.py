"""The checks of the flip stage: ``likely_flipped`` (names, thresholds, description), the reference-model
columns it collects, feature labels, and when the reference model joins by default."""

from __future__ import annotations

from typing import Any

from pairaudit.checks.base import CheckInfo

LIKELY_FLIPPED_INFO = CheckInfo(
    "likely_flipped",
    "evidence that the rejected response is better than the chosen one: one cross-fitted model over every signal "
    "that ran (embedding and length differences always; the reference model's log-probs and hidden states with "
    "--reference or on CUDA; reward margin; policy logit), whose signs and weights are learned from the dataset's "
    "own labels; likely_flipped_score = 1 - P(label right), flagged at `threshold` when the evidence beats chance",
    "flag",
    kind="global",
    extra="flips",
    default_enabled=True,
    thresholds={"threshold": 0.8, "folds": 5, "min_rows": 200, "z_min": 3.0, "min_auroc_for_rate": 0.75,
                "use_reference": True, "use_embedding": True, "fit_sample_rows": 200_000},
    why="studies of noisy preference data find that removing suspected flips is safer than flipping them back "
        "(a wrong flip injects a new error, and weak detectors have many false positives); flag for review, "
        "drop with --drop likely_flipped, or flip with --flip likely_flipped when the evidence is strong",
)

REF_COLS = ("ref_logp_chosen", "ref_logp_rejected", "ref_tokens_chosen", "ref_tokens_rejected",
            "ref_min_logp_chosen", "ref_min_logp_rejected", "policy_logp_chosen", "policy_logp_rejected",
            "reward_margin")
LABELS = {"embedding": "embedding-difference model log-odds", "chars": "log length difference (chars)",
          "words": "log length difference (words)", "lines": "log line-count difference",
          "ends_punct": "final-punctuation difference", "ref_sum": "reference summed log-prob margin",
          "ref_mean": "reference per-token log-prob margin", "ref_min": "reference min token log-prob margin",
          "ref_tokens": "log token-count difference", "probe": "reward-probe log-odds (reference hidden states)",
          "reward": "reward margin", "policy": "policy DPO logit"}


def wants_reference(cfg: Any, enabled: set[str]) -> bool:
    """The reference model joins when asked for (--reference, --policy, dpo_overflow_risk) or, by
    default, when a CUDA device will run it."""
    if cfg.reference or cfg.policy or "dpo_overflow_risk" in enabled:
        return True
    if str(cfg.device).startswith("cpu"):
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
