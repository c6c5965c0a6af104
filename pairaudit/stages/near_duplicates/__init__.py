"""``near_duplicate_pair`` and near ``contradictory_pair``: embeddings + FAISS search, verification, groups.

- :mod:`.stage`: the stage (observe: embed each side; finalize: the decision below);
- :mod:`.search`: neighbour search over the side vectors; :mod:`.match`: the field-by-field rule and
  the findings; :mod:`.verify`: search -> verification -> groups on compact arrays;
  :mod:`.unionfind`: the groups.
"""
