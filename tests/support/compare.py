"""Comparing two scans' tables across engines whose processes run another number of BLAS threads."""

from __future__ import annotations

import numpy as np
import polars as pl


def same_scores(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """Equal tables: exactly, but for the float rounding of model outputs and vector sums (the transformer
    embedder, the static vectors' centring, the reference model) under another thread count: a Ray actor runs one
    BLAS thread (``num_cpus=1``), the local engine as many as the machine has, and BLAS sums in another order
    (the 7th digit differs on some CPUs). Every non-float column, NaN positions included, must be identical."""
    assert got.columns == want.columns and got.height == want.height, (got.columns, want.columns)
    for col in want.columns:
        a, b = got[col], want[col]
        if a.dtype.is_float():
            x, y = a.to_numpy(), b.to_numpy()
            assert np.array_equal(np.isnan(x), np.isnan(y)), col
            assert np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True), (col, np.nanmax(np.abs(x - y)))
        else:
            assert a.equals(b), col


def same_findings(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """The same findings (rows, checks, fields, actions, groups, details); their scores as ``same_scores``."""
    assert got.drop("score").equals(want.drop("score")), (got, want)
    same_scores(got.select("score"), want.select("score"))
