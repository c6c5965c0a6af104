"""``likely_flipped`` and ``dpo_overflow_risk``: reference / reward / policy scores and a cross-fit pair model.

- :mod:`.stage`: the stage (observe: collect pairs; finalize: score, fit, judge);
- :mod:`.features`: per-pair features; :mod:`.model`: the cross-fitted flip model;
- :mod:`.stats`: AUROC proxy and the evidence judge; :mod:`.verdict`: scores -> findings;
- :mod:`.overflow`: ``dpo_overflow_risk`` from DPO logits.
"""
