"""``near_duplicate_pair`` and near ``contradictory_pair``: embeddings + FAISS search, verification, groups.

- :mod:`.stage`: the stage (observe: embed each side; finalize: search, verify, group);
- :mod:`.search`: the neighbour search over the summed side vectors (FAISS or exact);
- :mod:`.match`: the per-side verdicts (copy / paraphrase) and the findings;
- :mod:`.verify`: candidate pairs -> verified groups; :mod:`.unionfind`: the groups.
"""
