"""The neighbour search's pairs are deduplicated as they come (``PairSet``) and the candidate rule's surviving
pairs are found in chunks (``pair_member``): the same pairs, similarities and masks as one ``np.unique`` over
every pair found and one ``np.isin``."""

from __future__ import annotations

import numpy as np
import pytest

from pairaudit.stages.near_duplicates.search import PairSet, neighbour_search, search_cells
from pairaudit.stages.near_duplicates.verify import pair_member


def _unit(rng: np.random.Generator, n: int, d: int = 16, groups: int = 7) -> np.ndarray:
    """Rows around a few centres (many neighbours each, as rows of one prompt), unit float32."""
    centres = rng.normal(size=(groups, d))
    x = centres[rng.integers(0, groups, n)] + 0.35 * rng.normal(size=(n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _found_once(batches: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int):
    """The reference: every pair found, concatenated, one np.unique (first occurrence's similarity)."""
    a = np.concatenate([x[0] for x in batches])
    b = np.concatenate([x[1] for x in batches])
    s = np.concatenate([x[2] for x in batches])
    key, first = np.unique(a * n + b, return_index=True)
    return key // n, key % n, s[first]


@pytest.mark.parametrize("flush", [1, 7, 1000, 1 << 22])
def test_pairset_keeps_the_first_similarity_of_each_pair(flush: int) -> None:
    rng = np.random.default_rng(flush)
    n, batches = 50, []
    for _ in range(40):
        m = int(rng.integers(0, 30))
        x, y = rng.integers(0, n, m), rng.integers(0, n, m)
        keep = x != y
        a, b = np.minimum(x, y)[keep], np.maximum(x, y)[keep]
        batches.append((a, b, rng.random(len(a)).astype(np.float32)))  # a repeated pair gets another value
    ps = PairSet(n, flush=flush)
    for a, b, s in batches:
        ps.add(a, b, s)
    got = ps.result()
    want = _found_once(batches, n)
    assert len(want[0]) > 100
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_pairset_empty() -> None:
    a, b, s = PairSet(10).result()
    assert len(a) == len(b) == len(s) == 0


@pytest.mark.parametrize("nprobe", [1, 3])
def test_search_cells_matches_the_whole_concatenation(nprobe: int) -> None:
    """Real searches (ivf, several cells probed, crowded rows cut to k): the pairs found a batch at a time and
    merged are those of a search that keeps every pair and dedups once."""
    rng = np.random.default_rng(5)
    S = _unit(rng, 700)
    a, b, sim, best, info = neighbour_search(S, 5, 0.3, exact_max_rows=100, nprobe=nprobe)
    assert info["nlist"] > 1 and len(a) > 1000
    assert np.all(a < b)
    keys = a * len(S) + b
    assert np.all(np.diff(keys) > 0)
    np.testing.assert_allclose(sim, np.einsum("ij,ij->i", S[a], S[b]), atol=1e-5)
    # the same cells searched with a tiny flush: the same result
    cells = [np.flatnonzero(np.arange(len(S)) % 4 == c) for c in range(4)]
    best1, best2 = np.full(len(S), -np.inf, np.float32), np.full(len(S), -np.inf, np.float32)
    r1 = search_cells(S, cells, cells[::-1], 5, 0.3, best1)
    r2 = search_cells(S, cells, cells[::-1], 5, 0.3, best2, flush=3)
    for x, y in zip(r1, r2):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(best1, best2)


@pytest.mark.parametrize("chunk", [1, 5, 1 << 18])
def test_pair_member_is_isin(chunk: int) -> None:
    rng = np.random.default_rng(chunk)
    n = 300
    a = rng.integers(0, n, 2000)
    b = rng.integers(0, n, 2000)
    pick = rng.random(2000) < 0.1
    ea = np.concatenate([a[pick], rng.integers(0, n, 20)])
    eb = np.concatenate([b[pick], rng.integers(0, n, 20)])
    want = np.isin(a * n + b, ea * n + eb)
    got = pair_member(a, b, ea, eb, n, chunk=chunk)
    assert want.sum() >= pick.sum() > 50
    np.testing.assert_array_equal(got, want)
    assert not pair_member(a, b, ea[:0], eb[:0], n).any()


def _char_vectors(texts: list[str]) -> np.ndarray:
    """A text's letter histogram, unit length: depends on the text alone, like the embedder's vectors."""
    v = np.zeros((len(texts), 26), dtype=np.float32)
    for i, t in enumerate(texts):
        for ch in t.lower():
            if "a" <= ch <= "z":
                v[i, ord(ch) - 97] += 1
    return v / np.maximum(1e-9, np.linalg.norm(v, axis=1, keepdims=True))


@pytest.mark.parametrize("chunk", [1, 4, 1 << 15])
def test_field_vectors_embed_in_chunks(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planned pass embeds a chunk of texts per call (bounded memory): the same vectors as one call, each
    text embedded once, and every call knows how many texts of the pass are left (progress total)."""
    from pairaudit.stages.near_duplicates import lazy

    monkeypatch.setattr(lazy, "EMBED_CHUNK", chunk)
    texts = {i: [f"prompt {i % 3}", f"chosen answer number {i} about cats", f"rejected {i * 7} dogs"]
             for i in range(0, 40, 2)}
    rows = np.array(sorted(texts))
    calls: list[tuple[int, int]] = []
    unpacked: list[int] = []

    def embed(ts: list[str], remaining: int) -> np.ndarray:
        calls.append((len(ts), remaining))
        return _char_vectors(ts)

    def get(i: int) -> list[str]:
        unpacked.append(i)
        return texts[i]

    store = lazy.FieldVectors(rows, get, embed)
    need = np.zeros((3, len(rows)), dtype=bool)
    need[1:, :] = True
    need[0, ::3] = True
    store.plan(need)
    total = int(need.sum())
    assert sum(n for n, _ in calls) == total
    assert [r for _, r in calls] == list(range(total, 0, -chunk))[:len(calls)]
    assert all(n == min(chunk, r) for n, r in calls)
    # each row's texts unpacked once (again only for a row that a chunk boundary cuts)
    assert len(rows) <= len(unpacked) <= len(rows) + len(calls) - 1
    assert len(unpacked) == len(rows) or chunk < total
    P, C, R = store.view(rows)
    want = np.stack([_char_vectors([texts[i][f] for i in rows.tolist()]) for f in range(3)]).astype(np.float16)
    np.testing.assert_array_equal(C[np.arange(len(rows))], want[1])
    np.testing.assert_array_equal(R[np.arange(len(rows))], want[2])
    np.testing.assert_array_equal(P[np.arange(0, len(rows), 3)], want[0, ::3])
    assert store.n_unplanned == 0
    P[np.array([1])]  # a prompt outside the plan: embedded when read
    assert store.n_unplanned == 1 and calls[-1] == (1, 1)


def test_written_scratch_equals_in_memory(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A spilled stage writes its centred vectors and sums to files with pwrite (no mapping): the values read
    back are those computed in memory, whatever the chunk cuts."""
    from pairaudit.stages.near_duplicates.search import center, field_mean, sum_vectors
    from pairaudit.stages.spill import Mapped, Spill, Written

    monkeypatch.setenv("PAIRAUDIT_SPILL_DIR", str(tmp_path))
    rng = np.random.default_rng(3)
    A, B, C = (rng.normal(size=(1001, 24)).astype(np.float16) for _ in range(3))
    spill = Spill(limit=0)
    spill.maybe({"x": [A[:10]]})  # the stage has spilled: scratch columns go to files
    assert spill.spilled
    out = spill.scratch("c", A.shape, np.float16)
    assert isinstance(out, Written)
    got = spill.reopen(center(A, field_mean(A), chunk=97, out=out))
    assert isinstance(got, Mapped)
    np.testing.assert_array_equal(got[:], center(A, field_mean(A)))
    sums = spill.reopen(sum_vectors(A, B, C, chunk=100, out=spill.scratch("s", A.shape, np.float32)))
    np.testing.assert_array_equal(sums[:], sum_vectors(A, B, C))
    np.testing.assert_array_equal(sums[np.array([5, 1000, 0])], sum_vectors(A, B, C)[[5, 1000, 0]])
    with pytest.raises(TypeError):
        spill.scratch("w", (4, 2), np.float32)[np.array([1])] = 0
    spill.close()
    assert not list(tmp_path.iterdir())  # the spill folder and its files are gone


@pytest.mark.parametrize("n", [7, 1000, 40_000])
def test_flip_scale_is_standard_scaler(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flip model's scaler, fitted a slice of rows at a time on the given orientation only, gives sklearn's
    scale of both orientations (a constant column, an all-zero one, float32 and float64) to ~1e-14, and the same
    standardised rows to the last bits of float32."""
    from sklearn.preprocessing import StandardScaler

    from pairaudit.stages.flips.model import Scale

    monkeypatch.setattr(Scale, "CHUNK", 333)
    rng = np.random.default_rng(n)
    for dtype in (np.float32, np.float64):
        x = (rng.normal(size=(n, 12)) * rng.random(12) * 50).astype(dtype)
        x[:, 3] = 0.0
        x[:, 5] = 2.5
        want = StandardScaler(with_mean=False).fit(np.concatenate([x, -x]))
        got = Scale.fit_symmetric(x)
        np.testing.assert_allclose(got.scale_, want.scale_, rtol=1e-13)
        np.testing.assert_allclose(got.transform(x), want.transform(x), rtol=max(1e-13, 4 * np.finfo(dtype).eps))
        before = x.copy()
        assert got.transform(x, copy=False) is not before and not np.array_equal(x, before)  # in place


@pytest.mark.parametrize("window", [1, 257 * 3 * 5, 16 << 20])
def test_mapped_selection_copied_a_window_at_a_time(window: int, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A list of rows of a spilled column is copied in sorted order out of bounded windows of the file (a row
    per window, 5 rows, the default; the second part written after the first, so a window crosses the page
    boundaries of neither): the same values as the array in memory, for unsorted, repeated and negative rows,
    with a column index, a list or a mask; an index out of range is an IndexError, as numpy's."""
    from pairaudit.stages import spill as spill_mod

    monkeypatch.setattr(spill_mod, "WINDOW_BYTES", window)
    monkeypatch.setenv("PAIRAUDIT_SPILL_DIR", str(tmp_path))
    rng = np.random.default_rng(window)
    sk = np.array([[f"text {i} {j}".encode() for j in range(3)] for i in range(200)], dtype="S257")
    sp = spill_mod.Spill(limit=0)
    sp.maybe({"sk": [sk[:70], sk[70:]]})
    col = sp.column("sk", [])
    assert isinstance(col, spill_mod.Mapped)
    idx = rng.integers(-200, 200, 157)
    np.testing.assert_array_equal(col[idx], sk[idx])
    np.testing.assert_array_equal(col[idx, 1], sk[idx, 1])
    np.testing.assert_array_equal(col[idx.tolist()], sk[idx])
    np.testing.assert_array_equal(col[np.sort(idx % 200)], sk[np.sort(idx % 200)])
    mask = rng.random(200) < 0.3
    np.testing.assert_array_equal(col[mask], sk[mask])
    assert col[idx[:0]].shape == (0, 3)
    with pytest.raises(IndexError, match="200 is out of bounds"):
        col[np.array([3, 200])]
    sp.close()


@pytest.mark.parametrize("threads", [2, 3, 5])
def test_search_cells_on_threads_is_one_thread(threads: int, tmp_path) -> None:
    """Runs of cells searched on threads (each into its own set, merged in cell order) give the pairs, first
    similarities and best values of one thread, from memory and from a spilled file; a pair found in several
    cells keeps the similarity of its first."""
    from pairaudit.stages.spill import Mapped

    rng = np.random.default_rng(threads)
    S = _unit(rng, 900)
    path = tmp_path / "S.f32"
    S.tofile(path)
    cells = [np.flatnonzero(np.arange(len(S)) % 9 == c) for c in range(9)]
    probes = [np.sort(np.concatenate([cells[c], cells[(c + 1) % 9], cells[(c + 4) % 9]])) for c in range(9)]
    one_best = np.full(len(S), -np.inf, np.float32)
    one = search_cells(S, cells, probes, 4, 0.2, one_best)
    assert len(one[0]) > 2000
    for src in (S, Mapped(path, np.float32, S.shape)):
        best = np.full(len(S), -np.inf, np.float32)
        got = search_cells(src, cells, probes, 4, 0.2, best, flush=50, threads=threads)
        for x, y in zip(got, one):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(best, one_best)


def test_blas_products_do_not_depend_on_its_threads() -> None:
    """``threads.one_blas_thread`` (the threaded search's BLAS on one thread) leaves every similarity as BLAS on
    all its threads computes it: a search block of the real shape (queries x 256-d x a cell's members), bit for
    bit."""
    from threadpoolctl import threadpool_info

    from pairaudit.stages.near_duplicates.threads import one_blas_thread

    rng = np.random.default_rng(7)
    Q, X = _unit(rng, 3000, 256), _unit(rng, 5000, 256)
    default = Q @ X.T
    with one_blas_thread():
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
        one = Q @ X.T
    np.testing.assert_array_equal(one, default)
