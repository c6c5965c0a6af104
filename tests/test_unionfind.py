"""Groups of near duplicates never join two rows known to be different comparisons (``Separated``)."""

from __future__ import annotations

import numpy as np
import pytest

from pairaudit.stages.near_duplicates.unionfind import Separated

# rows 0 = S (prompt 1), 1 = R (prompt 1, another answer), 2 = a copy of S with a reworded prompt (prompt 2)
KEYS = np.array([1, 1, 2])


@pytest.mark.parametrize(("edges", "matched", "same", "groups", "refused"), [
    # R matches the copy of S, but R and S (one prompt) do not match each other: R stays out
    ([(0, 2), (1, 2)], {(0, 2), (2, 1)}, None, [[0, 2]], 1),
    # the stronger match decides which side the copy joins
    ([(1, 2), (0, 2)], {(0, 2), (2, 1)}, None, [[1, 2]], 1),
    # R and S match each other: one group
    ([(0, 2), (1, 2)], {(0, 2), (2, 1), (1, 0)}, None, [[0, 1, 2]], 0),
    # R and S hold the same prompt and responses (same digest): no conflict without a verified match
    ([(0, 2), (1, 2)], {(0, 2), (2, 1)}, np.array([7, 7, 8]), [[0, 1, 2]], 0),
])
def test_rows_of_one_prompt_that_differ_never_share_a_group(edges: list, matched: set, same: np.ndarray | None,
                                                             groups: list, refused: int) -> None:
    sep = Separated(3, KEYS, matched, same)
    for a, b in edges:
        sep.join(a, b)
    assert [g.tolist() for g in sep.groups()] == groups
    assert sep.refused == refused


def test_rows_of_different_prompts_join_freely() -> None:
    sep = Separated(4, np.array([1, 2, 3, 4]), set())
    assert all(sep.join(a, b) for a, b in [(0, 1), (2, 3), (1, 2)])
    assert [g.tolist() for g in sep.groups()] == [[0, 1, 2, 3]] and not sep.conflict(0, 3)
