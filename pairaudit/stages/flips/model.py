"""One cross-fitted model over every flip signal: P(the given label is right) for each pair.

Every feature of a pair is *antisymmetric*: swapping chosen and rejected negates it (a difference
"chosen minus rejected"). A logistic regression without intercept is trained on every pair in both
orientations (label 1 as given, label 0 swapped), so it learns from the dataset itself which
direction of each feature marks the preferred response (a reference model that prefers the shorter,
rejected answer gets a negative weight instead of dragging the score the wrong way) and
``p(x) = 1 - p(-x)`` holds exactly. A feature a row lacks (no reference score past
``--reference-max-rows``, no reward model) is 0 for that row: it contributes nothing, and the row is
scored by the others.

High-dimensional signals (the embedding difference, the reference model's pooled hidden-state
difference: the "reward probe") first go through their own cross-fitted linear model; its
out-of-fold log-odds become one feature of the final model (stacking). Every prediction is
out-of-fold (k folds, both orientations of a pair in the same fold): a pair is scored by models
that never saw it. The out-of-fold log-odds are calibrated by one temperature fitted against the
given labels, so a model at chance gives p ~ 0.5 instead of confident noise.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pairaudit.errors import require


def _folds(n: int, folds: int, seed: int, groups: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Each row's fold (seeded), and the number of folds. ``groups`` (per row, e.g. a digest of its prompt): the
    rows of one group share the fold of its first row, so no model is fitted on one pair of a prompt and
    scores another pair of it (multi-pair data: the pairs of a prompt share a response and its features,
    and the out-of-fold AUROC proxy would read that leak as evidence); a row alone in its group keeps the
    fold it has without groups."""
    k = max(2, int(min(folds, n // 10)))
    fold = np.random.default_rng(seed).permutation(n) % k
    if groups is not None and len(groups) == n:
        _, first, inv = np.unique(np.asarray(groups), return_index=True, return_inverse=True)
        fold = fold[first[inv.reshape(-1)]]
    return fold, k


PREPARE_ROWS = 16_384  # rows of ``x`` copied into the fold buffer at a time (``_copy_rows``)


def _copy_rows(x: np.ndarray, rows: np.ndarray | None, out: np.ndarray) -> None:
    """``x[rows]`` (every row when None) written into ``out`` a slice of rows at a time: no second copy of the
    selection beside ``out`` (``x`` may be a spilled column, read where it is indexed)."""
    for lo in range(0, len(out), PREPARE_ROWS):
        hi = min(len(out), lo + PREPARE_ROWS)
        out[lo:hi] = x[lo:hi] if rows is None else x[rows[lo:hi]]


def _prepare(x: np.ndarray, rows: np.ndarray | None = None, out: np.ndarray | None = None
             ) -> tuple[Scale, np.ndarray]:
    """The given orientation of ``x[rows]`` (all rows when None), standardised, and one row of zeros after it:
    (scaler, rows). The swapped orientation (``-x``, label 0) is never copied: it has the same loss term as the
    given one (``_solve``) and the same squares (``Scale.fit_symmetric``). A float16 ``x`` (e.g. memory-mapped)
    is read in float32, written to the first rows of ``out`` when given (a buffer the folds share: a large fresh
    array pays its page faults again, ~1 s a GB here)."""
    m = len(x) if rows is None else len(rows)
    dtype = np.float32 if x.dtype == np.float16 else x.dtype
    one = np.empty((m + 1, x.shape[1]), dtype) if out is None else out[:m + 1]
    _copy_rows(x, rows, one[:m])
    one[m] = 0.0
    scaler = Scale.fit_symmetric(one[:m])
    scaler.transform(one[:m], copy=False)
    return scaler, one


def _solve(xs: np.ndarray, c: float) -> Any:
    """The logistic regression without intercept on every row of ``xs`` in both orientations (``_prepare``'s
    rows: the given orientation, then a row of zeros), its solver's own BLAS at one thread (``one_thread_solver``).

    With no intercept, the swapped copy of a row (``-x``, label 0) has the loss and the gradient of the row itself
    (``log(1 + exp(-w.x))``), so the given rows with weight 2 are the objective of the 2m rows of both
    orientations, term for term; the zero row, weight 0, is the second class sklearn asks for and adds nothing
    (its loss is a constant, its gradient 0), and the weights sum to 2m as the 2m rows' do, so the penalty's
    scale is theirs. The same minimum as the fit on both orientations, half the rows to hold and to multiply:
    the weights agree within the solver's tolerance (tests/test_flips.py)."""
    from sklearn.linear_model import LogisticRegression

    m = len(xs) - 1
    y = np.ones(m + 1)
    y[m] = 0.0
    weight = np.full(m + 1, 2.0)
    weight[m] = 0.0
    with one_thread_solver():
        return LogisticRegression(C=c, fit_intercept=False, max_iter=2000).fit(xs, y, sample_weight=weight)


_SOLVER_BLAS: list[Any] = []  # the threadpoolctl selection of scipy's own BLAS (or None), found once


def _scipy_blas() -> Any:
    """The BLAS libraries loaded from scipy's own folders (a wheel bundles one beside numpy's), as a threadpoolctl
    selection; None when scipy uses no BLAS of its own (e.g. one shared with numpy: left alone) or threadpoolctl
    cannot say."""
    if not _SOLVER_BLAS:
        sel = None
        try:
            import scipy
            import scipy.optimize  # noqa: F401 - L-BFGS-B's module: its BLAS is loaded before the look
            from threadpoolctl import ThreadpoolController

            pkg = Path(scipy.__file__).resolve().parent
            homes = (pkg, pkg.parent / "scipy.libs")  # a wheel's bundled libraries (macOS: pkg/.dylibs)
            ctl = ThreadpoolController()
            mine = [lib.filepath for lib in ctl.lib_controllers if lib.user_api == "blas"
                    and any(Path(lib.filepath).resolve().is_relative_to(h) for h in homes)]
            sel = ctl.select(filepath=mine) if mine else None
        except Exception:  # noqa: BLE001 - no threadpoolctl (or an old one): the solver keeps its threads
            sel = None
        _SOLVER_BLAS.append(sel)
    return _SOLVER_BLAS[0]


@contextmanager
def one_thread_solver() -> Iterator[None]:
    """scipy's own BLAS at one thread while L-BFGS-B runs. L-BFGS-B's BLAS and LAPACK calls work on vectors of
    the feature count and matrices of at most 20 x 20 (10 corrections kept): sizes the BLAS computes on one
    thread either way, so the weights are the same bit for bit (tests/test_flips.py compares them). Allowed two
    threads it still costs ~2-6 ms an iteration on this busy 2-core machine, ~0.1-0.2 ms at one (measured: 1.3 s
    of a ~14 s flip model at 100k rows). numpy's BLAS (the products with the data) keeps its threads: its
    thread split changes the rounding of some rows."""
    sel = _scipy_blas()
    if sel is None:
        yield
        return
    with sel.limit(limits=1):
        yield


class Scale:
    """``StandardScaler(with_mean=False)`` of the fitted rows in both orientations, summed a slice of rows at a
    time (``fit_symmetric``): no float64 copy of the whole matrix and its NaN mask as sklearn makes (~2.5 GB for the
    400k x 256 rows of a fold at 1M rows), no negated copy either."""

    CHUNK = 16_384
    BUFFER_BYTES = 4 << 20  # a slice of at most this many float64 bytes (2k rows of 256)

    def __init__(self, scale: np.ndarray) -> None:
        self.scale_ = scale

    @classmethod
    def fit_symmetric(cls, X: np.ndarray) -> Scale:
        """The scale of the rows of ``X`` and their negations together (``StandardScaler(with_mean=False)`` of
        ``np.r_[X, -X]``, to ~1e-14 relative) without the negated copy: their mean is 0, so the variance is the
        mean square, summed in float64 a slice at a time. A column of zeros keeps the scale 1 (sklearn's)."""
        n = len(X)
        chunk = max(1, min(cls.CHUNK, cls.BUFFER_BYTES // (8 * max(1, X.shape[1]))))
        sq = np.zeros(X.shape[1])
        for lo in range(0, n, chunk):
            part = np.asarray(X[lo:lo + chunk], np.float64)
            if not np.isfinite(part).all():
                bad = lo + int(np.flatnonzero(~np.isfinite(part).all(axis=1))[0])
                raise ValueError(f"flip model: feature row {bad} is not finite (NaN or inf); expected finite "
                                 "features (absent values are 0 before the fit)")
            sq += np.einsum("ij,ij->j", part, part)
        var = sq / max(n, 1)
        scale = np.sqrt(var)
        scale[var == 0] = 1.0
        return cls(scale)

    def transform(self, X: np.ndarray, copy: bool = True) -> np.ndarray:
        X = np.array(X, dtype=X.dtype if X.dtype in (np.float32, np.float64) else np.float64, copy=copy)
        X /= self.scale_.astype(X.dtype)
        return X


C_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
C_SEARCH_ROWS = 20_000  # the regularisation is chosen on at most this many rows (a seeded sample)
FIT_MAX_ROWS = 200_000  # a high-dimensional signal's fold model is fitted on at most this many rows (seeded sample)
CHUNK_ROWS = 262_144  # held-out rows are scored in chunks of this many (bounded memory on large datasets)


def _cross_fit(x: np.ndarray, folds: int, cs: tuple[float, ...], seed: int, max_fit_rows: int | None = None,
               groups: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, Any, list[np.ndarray], np.ndarray]]:
    """Per fold: (held-out mask, scaler, the weights of the models fitted on the rest, or on a seeded sample of
    ``max_fit_rows`` of them, one per inverse regularisation strength of ``cs``, and the fold buffer, free for the
    held-out rows until the next fold). A fold's rows are copied and standardised once for every value of ``cs``,
    into one buffer all folds share: each model is the one a fresh copy per value and fold gives
    (tests/test_flips.py)."""
    fold, k = _folds(len(x), folds, seed, groups)
    fit_n = len(x) - np.bincount(fold, minlength=k)
    if max_fit_rows is not None:
        fit_n = np.minimum(fit_n, max_fit_rows)
    buf = np.empty((int(fit_n.max()) + 1, x.shape[1]), np.float32 if x.dtype == np.float16 else x.dtype)
    for f in range(k):
        tr, te = fold != f, fold == f
        if te.any():
            rows = np.flatnonzero(tr)
            if max_fit_rows is not None and len(rows) > max_fit_rows:
                rows = np.sort(np.random.default_rng(seed + 1 + f).choice(rows, max_fit_rows, replace=False))
            scaler, xs = _prepare(x, rows, buf)
            yield te, scaler, [_solve(xs, c).coef_[0] for c in cs], buf


def _held_out(x: np.ndarray, te: np.ndarray, scaler: Any, buf: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(row indices, standardised rows) of the held-out rows, in chunks of ``CHUNK_ROWS`` (at most the fold
    buffer's rows), each read into the fold buffer ``buf`` (free once the fold's models are fitted; the values
    ``scaler.transform`` of a float32 copy gives, bit for bit; ``_cross_fit`` makes it in that dtype)."""
    idx = np.flatnonzero(te)
    step = max(1, min(CHUNK_ROWS, len(buf)))
    for lo in range(0, len(idx), step):
        part = idx[lo:lo + step]
        out = buf[:len(part)]
        _copy_rows(x, part, out)
        yield part, scaler.transform(out, copy=False)


def _oof(x: np.ndarray, folds: int, cs: tuple[float, ...], seed: int, max_fit_rows: int | None = None,
         groups: np.ndarray | None = None) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """Out-of-fold log-odds per value of ``cs``, and each fold's weights on the raw (unscaled) features per value."""
    ds = [np.zeros(len(x)) for _ in cs]
    linear: list[list[np.ndarray]] = [[] for _ in cs]
    for te, scaler, ws, buf in _cross_fit(x, folds, cs, seed, max_fit_rows, groups):
        for part, xs in _held_out(x, te, scaler, buf):
            for d, w in zip(ds, ws):
                d[part] = xs @ w
        for lin, w in zip(linear, ws):
            lin.append(w / scaler.scale_)
    return ds, linear


def oof_logodds(x: np.ndarray, *, folds: int = 5, c: float | str = "auto", seed: int = 0,
                linear: list[np.ndarray] | None = None, groups: np.ndarray | None = None) -> np.ndarray:
    """Out-of-fold log-odds that each row's given orientation is right (one linear model per fold).

    ``c="auto"``: the inverse regularisation strength is the one of ``C_GRID`` whose out-of-fold
    log-odds best separate the given orientation from the swapped one (AUROC proxy on the dataset's own
    labels, never any ground truth); high-dimensional signals on a few hundred rows need strong
    regularisation, large datasets less. On more than ``C_SEARCH_ROWS`` rows the search runs on a
    seeded sample of that size and only the chosen value is fitted on every row. ``linear`` gets the fold
    models' weights on the raw features (their mean scores rows no fold saw: ``apply``). ``groups``: per row,
    rows that share a fold (``_folds``: the pairs of one prompt).

    Args:
        x: (rows, features) antisymmetric features, float16 (e.g. memory-mapped) or float32.
        folds: the number of folds (``_folds`` caps it at one per 10 rows).
        c: the inverse regularisation strength, or "auto".
        seed: the folds' and samples' seed.
        linear: receives the fold models' weights on the raw features.
        groups: per row, rows that share a fold.

    Returns:
        The out-of-fold log-odds, one per row.
    """
    from pairaudit.stages.flips.stats import auroc_proxy

    require("sklearn", "flips", "the likely_flipped model")
    if x.dtype not in (np.float16, np.float32):  # float16 (e.g. memory-mapped) is read in float32 chunks
        x = np.asarray(x, dtype=np.float32)
    if c == "auto":
        sample, sgroups = x, groups
        if len(x) > C_SEARCH_ROWS:
            pick = np.sort(np.random.default_rng(seed).choice(len(x), C_SEARCH_ROWS, replace=False))
            sample, sgroups = x[pick], (groups[pick] if groups is not None else None)
        sample = sample if isinstance(sample, np.ndarray) else sample[:]  # a spilled column: read it
        sample = sample.astype(np.float32) if sample.dtype == np.float16 else sample
        ds, ws = _oof(sample, folds, C_GRID, seed, groups=sgroups)  # every value of the grid, fold by fold
        best, best_auc = 0, -1.0
        for j, d in enumerate(ds):
            auc = auroc_proxy(d)
            if auc > best_auc + 1e-9:
                best, best_auc = j, auc
        if len(sample) == len(x):
            if linear is not None:
                linear.extend(ws[best])
            return ds[best]
        c = C_GRID[best]
        del sample, ds  # the search's copies go before the fit on every row
    ds, ws = _oof(x, folds, (float(c),), seed, FIT_MAX_ROWS, groups)
    if linear is not None:
        linear.extend(ws[0])
    return ds[0]


def temperature(d: np.ndarray) -> float:
    """One non-negative scale ``a`` so that ``sigmoid(a * d)`` is calibrated against the given labels."""
    from sklearn.linear_model import LogisticRegression

    n = len(d)
    if n == 0 or not np.any(d):
        return 0.0
    cal = LogisticRegression(C=1e4, fit_intercept=False, max_iter=1000)
    with one_thread_solver():
        cal.fit(np.r_[d, -d][:, None], np.r_[np.ones(n), np.zeros(n)])
    return max(float(cal.coef_[0, 0]), 0.0)


@dataclass
class FlipFit:
    """Result of :func:`fit_flip_model` for ``n`` rows."""

    p_correct: np.ndarray  # calibrated out-of-fold P(given label right); NaN where not scored
    logodds: np.ndarray  # out-of-fold log-odds before calibration
    contributions: np.ndarray  # (n, features): each feature's share of the log-odds (scaled x * weight)
    names: list[str]
    weights: dict[str, float]  # mean standardised weight per feature over the folds (sign = direction)
    folds: int
    temperature: float
    linear: np.ndarray | None = None  # mean fold weights on the raw features: log-odds of unseen rows = x @ linear


def fit_flip_model(features: dict[str, np.ndarray], *, folds: int = 5, c: float = 1.0, seed: int = 0,
                   groups: np.ndarray | None = None) -> FlipFit:
    """Cross-fitted antisymmetric logistic regression over named per-row features (NaN = absent); ``groups``:
    per row, rows that share a fold (the pairs of one prompt, ``_folds``)."""
    require("sklearn", "flips", "the likely_flipped model")
    names = [k for k, v in features.items() if np.isfinite(v).any() and np.nanstd(v) > 0]
    n = len(next(iter(features.values())))
    x = np.column_stack([np.nan_to_num(np.asarray(features[k], np.float64), nan=0.0) for k in names]) \
        if names else np.zeros((n, 0))
    if not names:
        return FlipFit(np.full(n, 0.5), np.zeros(n), np.zeros((n, 0)), [], {}, 0, 0.0)
    contrib = np.zeros_like(x)
    coefs, linear = [], []
    for te, scaler, (w,), buf in _cross_fit(x, folds, (c,), seed, groups=groups):
        for part, xs in _held_out(x, te, scaler, buf):
            contrib[part] = xs * w
        coefs.append(w)
        linear.append(w / scaler.scale_)
    d = contrib.sum(axis=1)
    a = temperature(d)
    p = 1.0 / (1.0 + np.exp(-np.clip(a * d, -50, 50)))
    weights = {name: round(float(w), 4) for name, w in zip(names, np.mean(coefs, axis=0))}
    return FlipFit(p, d, contrib, names, weights, len(coefs), a, np.mean(linear, axis=0))


def drivers(fit: FlipFit, i: int, raw: dict[str, np.ndarray], labels: dict[str, str], top: int = 3) -> str:
    """The features that pushed row ``i`` toward "flipped" most, with their raw values."""
    if not fit.names:
        return ""
    c = fit.contributions[i]
    order = [j for j in np.argsort(c, kind="stable") if c[j] < 0][:top]
    parts = []
    for j in order:
        name = fit.names[j]
        v = raw[name][i] if name in raw else float("nan")
        parts.append(f"{labels.get(name, name)} {v:+.3g} (pushes {-c[j] * fit.temperature:.2f} log-odds)")
    return "; ".join(parts)
