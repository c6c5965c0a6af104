"""``likely_flipped`` and ``dpo_overflow_risk``: model scores and a cross-fitted pair model.

- :mod:`.stage`: the stage (observe: length features, reference / reward / policy scores; finalize);
- :mod:`.features`: length features; :mod:`.model`: the cross-fitted flip model;
- :mod:`.stats`: what the evidence supports (enough rows, better than chance, flip rate);
- :mod:`.verdict`: features -> scores, findings and the verdict;
- :mod:`.overflow`: ``dpo_overflow_risk`` (DPO logits / log-probs that break half precision).
"""
