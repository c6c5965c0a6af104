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
