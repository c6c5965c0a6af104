"""The near-duplicate search cut into cell groups (``stages/near_duplicates/cells.py``, what the Ray engine runs
on its workers) finds exactly the local engine's candidate pairs and nearest-neighbour similarities, also for
pairs whose rows live in different cells held by different groups: each row travels to every group holding
one of its ``nprobe`` nearest cells, so a pair is compared wherever one row's cell is probed by the other."""

from __future__ import annotations

import numpy as np
import pytest

from pairaudit.stages.near_duplicates import cell_groups
from pairaudit.stages.near_duplicates.cell_groups import CellGroup, CellIndex
from pairaudit.stages.near_duplicates.cells import shard_assign
from pairaudit.stages.near_duplicates.infos import NEAR_DUPLICATE_INFO
from pairaudit.stages.near_duplicates.match import SKETCH_BYTES, compared_keys
from pairaudit.stages.near_duplicates.search import plan_cells, sum_vectors, training_sample
from pairaudit.stages.near_duplicates.verify import find_groups
from pairaudit.stages.spill import Mapped, Spill


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float16)


def _rows(n: int, seed: int) -> dict[str, np.ndarray]:
    """Clustered vectors (a topic per cluster); the first 300 rows copied with noise: near-duplicate pairs."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(30, 24))
    base = topics[rng.integers(0, 30, n)] + 0.8 * rng.normal(size=(n, 24))
    base[n - 300:] = base[:300] + 0.25 * rng.normal(size=(300, 24))
    P, C, R = (_unit(base + 0.35 * rng.normal(size=base.shape)) for _ in range(3))
    sk = np.array([[f"r{i} f{f}".encode() for f in range(3)] for i in range(n)], dtype=f"S{SKETCH_BYTES + 1}")
    hresp = rng.integers(0, 2**62, (n, 2))
    return {"rows": np.arange(n, dtype=np.int64) * 2, "P": P, "C": C, "R": R, "sk": sk,
            "ln": np.full((n, 3), 6, np.int32), "hresp": hresp, "phash": hresp[:, 0].copy(), "n": n}


def _cell_setup(d: dict[str, np.ndarray], dup: dict, nprobe: int, groups: int, shards: int, mode: str,
                piece_rows: int | None = None) -> tuple:
    """The phases before the search, as the Ray engine runs them: the plan, the shards' cuts, the index (meta,
    quantizer) and every shard's rows assigned to the cell groups."""
    n = int(d["n"])
    cells = plan_cells(n, 200, nprobe)
    plan = {**cells, "groups": groups, "dim": 24, "mode": mode, "dup": dup, "con": dup, "want_dups": True,
            "want_con": True}
    cuts = np.linspace(0, n, shards + 1).astype(int)
    parts = [{k: (v[a:b] if isinstance(v, np.ndarray) else b - a) for k, v in d.items()} | {"offset": int(a)}
             for a, b in zip(cuts[:-1], cuts[1:])]
    train = training_sample(n, cells["n_train"])
    S = [{"S": sum_vectors(p["P"], p["C"], p["R"])[train[(train >= p["offset"]) & (train < p["offset"] + p["n"])]
                                                   - p["offset"]]} for p in parts]
    meta, quantizer, _ = CellIndex(plan, S, [{"phash": p["phash"]} for p in parts],
                                   [{"keys": compared_keys(p["hresp"])} for p in parts]).build()
    if piece_rows is None:
        return plan, cuts, meta, quantizer, [shard_assign(p, plan, quantizer) for p in parts]
    # as the Ray actor cuts them: each group's rows of a shard in pieces of ``piece_rows`` rows
    return plan, cuts, meta, quantizer, [shard_assign(p, plan, quantizer, encode=list, piece_rows=piece_rows)
                                         for p in parts]


def _group(g: int, plan: dict, quantizer: dict, assigned: list, spilled: bool) -> CellGroup:
    """Group ``g`` of the shards' parts; ``spilled``: its vectors and sketches on disk as the Ray actor keeps them
    (read back a chunk at a time)."""
    pieces = (x for a in assigned for x in (a[g] if isinstance(a[g], list) else [a[g]]))
    group = CellGroup(g, plan, quantizer["cell_group"], (dict(x) for x in pieces), Spill(limit=0) if spilled else None)
    if spilled and group.d is not None:
        assert all(isinstance(group.d[k], Mapped) for k in cell_groups.SPILLED)
    return group


@pytest.mark.parametrize("spilled", [False, True])
@pytest.mark.parametrize(("nprobe", "groups", "shards", "budget"),
                         [(1, 2, 2, None), (2, 3, 3, None), (3, 2, 1, None), (2, 2, 2, 5000)])
def test_cell_groups_find_the_local_pairs(nprobe: int, groups: int, shards: int, budget: int | None,
                                          spilled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``budget``: a group searches and verifies its cells a few at a time (bounded memory): the same pairs;
    ``spilled``: its large columns on disk, the same pairs."""
    if budget is not None:
        monkeypatch.setattr(cell_groups, "PAIR_BUDGET", budget)
    n = 2400
    d = _rows(n, seed=nprobe)
    # the loose rule's floor as these synthetic rows were sized for (issue 36 raised the default to 0.70): enough
    # candidate pairs across cell groups for the check below
    dup = {**NEAR_DUPLICATE_INFO.thresholds, "exact_max_rows": 200, "nprobe": nprobe, "candidate_min_response": 0.55}
    keys = compared_keys(d["hresp"])
    local = find_groups(d["rows"], d["P"], d["C"], d["R"], d["sk"], d["ln"], dup, dup, candidates_only=True,
                        compared=(d["hresp"], keys))

    plan, cuts, meta, quantizer, assigned = _cell_setup(d, dup, nprobe, groups, shards, "hybrid")
    found, best = set(), np.full(n, -np.inf, np.float32)
    for g in range(groups):
        group = _group(g, plan, quantizer, assigned, spilled)
        out = group.search(keys, None, [int(a) for a in cuts[:-1]], {})
        for part in out[:-1]:
            np.maximum.at(best, part["pos"], part["best"])
        if group.cand is not None:
            found |= set(zip(group.d["pos"][group.cand[0]].tolist(), group.d["pos"][group.cand[1]].tolist()))
    want = set(zip(local["a"].tolist(), local["b"].tolist()))
    assert found == want and len(want) > 100
    nearest = local["near_duplicate_pair_score"]
    assert np.array_equal(np.where(np.isfinite(best), best, np.nan), nearest.astype(np.float32), equal_nan=True)

    # with more than one probe, pairs whose rows' own cells are in different groups (planted copies among them)
    # are found all the same
    assert sum(int(a[-1]["cell_sizes"].sum()) for a in assigned) == n
    home = {}
    for a in assigned:
        for g in range(groups):
            blob = a[g]
            if len(blob.get("pos", ())):
                for pos, cell in zip(blob["pos"].tolist(), blob["assign"][:, 0].tolist()):
                    home[pos] = cell
    planted = [(i, n - 300 + i) for i in range(300) if (i, n - 300 + i) in want]
    across = [(a, b) for a, b in want if home[a] != home[b]]
    other_group = [(a, b) for a, b in across
                   if quantizer["cell_group"][home[a]] != quantizer["cell_group"][home[b]]]
    planted_across = [(a, b) for a, b in planted if home[a] != home[b]]
    assert len(planted) > 200
    assert (len(other_group) > 100 and planted_across) if nprobe > 1 else not across
    assert meta["stats"]["distinct_prompts"] == n


@pytest.mark.parametrize("candidates_only", [True, False])
def test_verifying_candidates_a_chunk_at_a_time_changes_nothing(candidates_only: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``match_edges`` verifies ``MATCH_CHUNK`` candidate pairs at a time (a 1M-row scan has ~20M): cut into
    chunks of 97 pairs, the candidates, groups and findings are those of one pass."""
    from pairaudit.stages.near_duplicates import verify

    n = 1200
    d = _rows(n, seed=7)
    dup = {**NEAR_DUPLICATE_INFO.thresholds, "exact_max_rows": 200, "nprobe": 2}
    keys = compared_keys(d["hresp"])

    def run() -> dict:
        return find_groups(d["rows"], d["P"], d["C"], d["R"], d["sk"], d["ln"], dup, dup, candidates_only=candidates_only,
                           compared=(d["hresp"], keys), prompt_keys=d["phash"])

    whole = run()
    monkeypatch.setattr(verify, "MATCH_CHUNK", 97)
    chunked = run()
    assert whole["stats"]["n_candidates"] > 10 * 97
    if candidates_only:
        assert len(whole["a"]) > 100
        assert np.array_equal(whole["a"], chunked["a"]) and np.array_equal(whole["b"], chunked["b"])
    else:
        assert len(whole["findings"]) > 100
        assert [(f.row, f.check, f.detail) for f in whole["findings"]] == \
               [(f.row, f.check, f.detail) for f in chunked["findings"]]
    assert whole["stats"] == chunked["stats"]


@pytest.mark.parametrize("spilled", [False, True])
@pytest.mark.parametrize(("hybrid", "nprobe", "groups", "shards", "budget"),
                         [(False, 2, 3, 3, 5000), (True, 2, 2, 2, None), (False, 1, 2, 1, None)])
def test_cell_groups_give_each_row_the_local_nearest_pair_and_outcome(
        hybrid: bool, nprobe: int, groups: int, shards: int, budget: int | None, spilled: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``near_duplicate_pair_reason`` comes from each row's nearest searched pair and that pair's outcome: over
    cell groups (searched a chunk at a time), merged per shard, they are the local engine's, under the deciding
    rule and under hybrid mode's loose candidate rule. ``spilled``: as a Ray actor holds a group (its shards'
    rows arriving in pieces of 97 rows, its vectors and sketches on disk), the same."""
    from pairaudit.stages.near_duplicates.reasons import NEAR_FIELDS, merge

    if budget is not None:
        monkeypatch.setattr(cell_groups, "PAIR_BUDGET", budget)
    n = 2400
    d = _rows(n, seed=11 + nprobe)
    dup = {**NEAR_DUPLICATE_INFO.thresholds, "exact_max_rows": 200, "nprobe": nprobe}
    keys = compared_keys(d["hresp"])
    local = find_groups(d["rows"], d["P"], d["C"], d["R"], d["sk"], d["ln"], dup, dup, candidates_only=hybrid,
                        compared=(d["hresp"], keys), reasons=True)["near"]
    local["prow"] = np.where(local["partner"] >= 0, d["rows"][local["partner"]], -1)
    plan, cuts, _, quantizer, assigned = _cell_setup(d, dup, nprobe, groups, shards, "hybrid" if hybrid else "static",
                                                     97 if spilled else None)  # spilled: in pieces, as on Ray
    assert not spilled or max(len(x) for a in assigned for x in a[:-1]) > 2  # several pieces a group
    per_shard: list[list[dict]] = [[] for _ in range(shards)]
    for g in range(groups):
        group = _group(g, plan, quantizer, assigned, spilled)
        out = group.search(keys, None if hybrid else (dup, dup), [int(a) for a in cuts[:-1]], {})
        for s, part in enumerate(out[:-1]):
            per_shard[s].append(part)
    got = [merge(per_shard[s], int(cuts[s + 1] - cuts[s]), int(cuts[s])) for s in range(shards)]
    got_all = {k: np.concatenate([g[k] for g in got]) for k in NEAR_FIELDS}
    assert (local["partner"] >= 0).sum() > n // 2
    assert (local["code"] >= 0).sum() == (local["partner"] >= 0).sum()
    for k in ("partner", "prow", "near", "code", "field", "limit"):
        assert np.array_equal(got_all[k], local[k]), (k, np.flatnonzero(got_all[k] != local[k])[:10])
    assert np.allclose(got_all["value"], local["value"], atol=1e-6)


def test_nearest_pairs_is_the_first_of_the_sort_by_row_nearness_and_partner() -> None:
    """``reasons.nearest_pairs`` picks per row what the first of a stable sort by (row, -rounded similarity,
    other row) picks (the order the engines agree on), without sorting: random pair lists with many ties,
    repeated pairs and rows with no pair."""
    from pairaudit.stages.near_duplicates.reasons import nearest_pairs

    rng = np.random.default_rng(11)
    for trial in range(200):
        n = int(rng.integers(2, 50))
        a, b = rng.integers(0, n, 150), rng.integers(0, n, 150)
        a, b = a[a != b], b[a != b]
        sim = (np.round(rng.random(len(a)) * 4) / 4 + rng.choice([0.0, 1e-6, 2e-5], len(a))).astype(np.float32)
        if trial % 3 == 0:  # a pair found twice (the search meets it from both ends)
            a, b, sim = np.r_[a, a[:4]], np.r_[b, b[:4]], np.r_[sim, sim[:4]]
        ends, other = np.r_[a, b], np.r_[b, a]
        near = np.round(np.r_[sim, sim].astype(np.float64), 4)
        want = np.full(n, -1)
        for pos in np.lexsort((other, -near, ends))[::-1]:  # the first of each row's run is written last
            want[ends[pos]] = pos % len(a)
        assert nearest_pairs(n, a, b, sim).tolist() == want.tolist(), trial


def test_a_cell_group_without_rows_reports_every_count_the_driver_sums() -> None:
    """A cell group that got no rows (or no candidate pairs) answers ``prompts`` with the same counts as one that
    did: the driver sums ``pairs`` and ``reached`` over every group (``ray_stages._verify_hybrid``)."""
    counts = CellGroup(0, {}, np.zeros(1, np.int64), []).prompts([])[1]
    assert counts == {"pairs": 0, "reached": 0}
