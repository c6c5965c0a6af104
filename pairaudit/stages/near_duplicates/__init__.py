"""``near_duplicate_pair`` and near ``contradictory_pair``: embeddings + FAISS search, verification, groups.

- :mod:`.stage`: the stage (observe: embed each side; finalize: the decision below);
  :mod:`.infos`: its checks, embedding modes and their packages; :mod:`.texts`: digests and compressed texts
  kept per row;
- :mod:`.search`: neighbour search over the side vectors; :mod:`.match`: the field-by-field rule;
  :mod:`.groups`: matches -> groups -> findings; :mod:`.calibrate`: the copy threshold from the dataset's
  own negatives; :mod:`.verify`: search -> verification -> groups on compact arrays; :mod:`.unionfind`:
  the groups (and ``Separated``: rows known to be different never share one);
- :mod:`.near_identical`: the embedding view of ``near_identical_pair``.
"""
