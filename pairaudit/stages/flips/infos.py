"""The flip stage's reference-model columns, feature labels, and when the reference model joins by default
(the check's declaration, ``LIKELY_FLIPPED_INFO``, is in ``verdict.py``)."""

from __future__ import annotations

from typing import Any

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
