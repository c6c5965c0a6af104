"""Peak memory and time of the flip model's high-dimensional fit (``oof_logodds``) on a column on disk.

The Ray engine fits ``likely_flipped`` on one actor from a sample of at most ``fit_sample_rows`` (200,000) rows,
whose 256 float16 embedding differences are a spilled column (``spill.Mapped``); this fit is the largest
working set of that actor (docs/scale.md). This script builds such a column of seeded random rows with a planted
linear signal, fits it as the stage does, and prints the process's own memory (VmRSS - RssShmem, sampled every
20 ms) over its level before the fit, the seconds, and a checksum of the out-of-fold log-odds (equal checksums:
the same values).

    .venv/bin/python scripts/bench_flip_fit.py --rows 100000,200000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def own_mb() -> float:
    """This process's resident memory less its shared-memory pages (MB)."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            fields[key] = int(parts[0])
    return (fields["VmRSS"] - fields.get("RssShmem", 0)) / 1024


def column(n: int, dim: int, folder: Path) -> object:
    """A spilled float16 column of ``n`` antisymmetric rows with a planted linear signal (seeded)."""
    from pairaudit.stages.spill import Mapped

    rng = np.random.default_rng(0)
    w = rng.normal(size=dim)
    x = (rng.normal(size=(n, dim)) * 0.5).astype(np.float16)
    right = (x.astype(np.float32) @ w + rng.normal(size=n) * 3) > 0
    x[~right] *= -1
    path = folder / f"emb_{n}_{dim}.bin"
    x.tofile(path)
    return Mapped(path, np.float16, (n, dim))


def measure(n: int, dim: int, folder: Path) -> str:
    from pairaudit.stages.flips.model import oof_logodds

    x = column(n, dim, folder)
    base = own_mb()
    peak, stop = [base], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], own_mb())
            time.sleep(0.02)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    t0 = time.perf_counter()
    out = oof_logodds(x, folds=5)  # type: ignore[arg-type]
    seconds = time.perf_counter() - t0
    stop.set()
    t.join()
    return (f"{n:>9,} rows x {dim}: own memory +{peak[0] - base:,.0f} MB over {base:,.0f} MB, {seconds:.1f} s, "
            f"checksum {float(np.nansum(out)):.6f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="100000,200000", help="comma-separated row counts")
    ap.add_argument("--dim", type=int, default=256, help="features (the static embedder's 256)")
    args = ap.parse_args()
    import sklearn.linear_model  # noqa: F401 - imported before the first measure, as in a scan's actor

    with tempfile.TemporaryDirectory(prefix="bench-flip-fit-") as tmp:
        for n in (int(r) for r in args.rows.split(",")):
            print(measure(n, args.dim, Path(tmp)), flush=True)


if __name__ == "__main__":
    main()
