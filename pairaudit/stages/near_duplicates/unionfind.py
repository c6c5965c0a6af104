"""Union-find over row indices (numpy-backed; path halving + union by size)."""

from __future__ import annotations

import numpy as np


class UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = np.arange(n, dtype=np.int64)
        self.size = np.ones(n, dtype=np.int64)

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]

    def union_edges(self, a: np.ndarray, b: np.ndarray) -> None:
        for x, y in zip(a.tolist(), b.tolist()):
            self.union(x, y)

    def groups(self, members: np.ndarray | None = None) -> list[np.ndarray]:
        """Components with at least two elements (restricted to ``members`` when given), each sorted."""
        idx = np.arange(len(self.parent)) if members is None else np.unique(members)
        roots = np.array([self.find(int(i)) for i in idx], dtype=np.int64)
        order = np.lexsort((idx, roots))
        roots, idx = roots[order], idx[order]
        bounds = np.flatnonzero(np.diff(roots)) + 1
        return [g for g in np.split(idx, bounds) if len(g) > 1]


class Separated(UnionFind):
    """Union-find whose groups never hold two rows known to be different comparisons: rows with the same
    prompt text (equal ``keys``; e.g. several pairs per prompt) that are not a verified match of each other
    (``matched``: pairs of row indices, either order; rows with equal ``same`` values, i.e. the same prompt and
    responses, always match). ``join`` refuses a union that would put such rows in one group: a paraphrased
    copy of row S must not pull in row R that answers S's prompt with a different response, however close
    R's answer is to the copy's."""

    def __init__(self, n: int, keys: np.ndarray, matched: set[tuple[int, int]], same: np.ndarray | None = None
                 ) -> None:
        super().__init__(n)
        self.keys, self.matched, self.same = keys, matched, same
        self.by_key: dict[int, dict[int, list[int]]] = {}  # root -> prompt key -> member rows
        self.refused = 0  # matches left out by ``join``

    def _members(self, root: int) -> dict[int, list[int]]:
        got = self.by_key.get(root)
        return got if got is not None else {int(self.keys[root]): [root]}

    def _different(self, u: int, v: int) -> bool:
        if (u, v) in self.matched or (v, u) in self.matched:
            return False
        return self.same is None or self.same[u] != self.same[v]

    def conflict(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        ma, mb = self._members(ra), self._members(rb)
        for key, us in ma.items():
            for v in mb.get(key, ()):
                if any(self._different(u, v) for u in us):
                    return True
        return False

    def join(self, a: int, b: int) -> bool:
        """Union ``a`` and ``b`` unless that joins rows known to be different; True when they are joined."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        if self.conflict(a, b):
            self.refused += 1
            return False
        merged = {key: list(us) for key, us in self._members(ra).items()}
        for key, vs in self._members(rb).items():
            merged.setdefault(key, []).extend(vs)
        self.union(a, b)
        root = self.find(a)
        self.by_key.pop(ra, None)
        self.by_key.pop(rb, None)
        self.by_key[root] = merged
        return True
