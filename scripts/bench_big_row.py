"""Peak memory of a scan with one huge response among ordinary rows (issue 23: a 50 MB response among
100 rows peaked at 9.3 GB). Runs the same scan twice in fresh processes: once with the huge row, once
with an ordinary row in its place (the baseline: imports, models, the other rows), and prints each peak
RSS and what the huge row added, as a multiple of its size.

    python scripts/bench_big_row.py [--mb 5] [--rows 100] [--only CHECKS] [--extra '--fast']
    python scripts/bench_big_row.py --mb 50 --rows 20 --stages   # each whole-dataset stage alone, then all

``--stages`` (issue 38) runs every default whole-dataset check alone (``--only CHECK``) and then the default
scan, each against its own baseline, so the stage where a huge row blows up shows by name; it exits 1 when
what the huge row costs the default scan (its peak RSS minus the baseline's: the row's own cost, as issue 38
counts it) exceeds ``--limit`` (20) times the row's size. The total peak is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_rows(path: Path, rows: int, mb: float, seed: int = 0) -> int:
    """``rows`` rows, the middle one with a chosen text of ``mb`` MB (0: an ordinary row); returns the
    longest line's size in bytes."""
    rng = random.Random(seed)
    words = "the of and to in is was for that on with as by at from it an be this are or".split()
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(rows):
            chosen = f"A careful answer number {i}: " + " ".join(rng.choice(words) for _ in range(40))
            if i == rows // 2 and mb:
                n = int(mb * 1e6)
                chosen = (" ".join(rng.choice(words) for _ in range(n // 3)))[:n]
            rec = {"prompt": f"Question {i}?", "chosen": chosen, "rejected": f"No {i}, " + rng.choice(words)}
            fh.write(json.dumps(rec) + "\n")
    return max(len(line) for line in open(path, "rb"))


def peak_of_scan(src: Path, out: Path, args: argparse.Namespace) -> tuple[int, int, float, str]:
    """(exit code, peak RSS in bytes, seconds, output tail) of one scan in a fresh process."""
    cmd = [sys.executable, "-m", "pairaudit.cli", "scan", str(src), "--out", str(out), "-q",
           *(["--only", args.only] if args.only else []), *args.extra.split()]
    t = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=log, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        log.seek(0)
        tail = log.read()[-2000:].decode("utf-8", "replace")
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024, wall, tail  # ru_maxrss: KiB on Linux


#: the default whole-dataset checks (``pairaudit checks``: kind global, on by default)
STAGES = ("duplicate_pair", "contradictory_pair", "length_outlier", "near_duplicate_pair", "preference_cycle",
          "likely_flipped", "split_leakage")


def per_stage(args: argparse.Namespace) -> int:
    """Each whole-dataset stage alone, then the default scan: peak RSS and seconds against the baseline."""
    worst = total = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.jsonl", Path(tmp) / "small.jsonl"
        largest = write_rows(big, args.rows, args.mb)
        write_rows(small, args.rows, 0)
        print(f"rows {args.rows}, largest row {largest / 1e6:.1f} MB")
        print(f"{'checks':24} {'exit':>4} {'peak GB':>8} {'x row':>6} {'added MB':>9} {'s':>6} {'base s':>7}")
        for k, only in enumerate([*STAGES, None]):
            args.only = only
            code0, base, wall0, _ = peak_of_scan(small, Path(tmp) / f"b{k}", args)
            code, peak, wall, tail = peak_of_scan(big, Path(tmp) / f"o{k}", args)
            print(f"{only or 'default scan':24} {code:>4} {peak / 1e9:>8.2f} {peak / largest:>6.1f} "
                  f"{(peak - base) / 1e6:>9.0f} {wall:>6.1f} {wall0:>7.1f}", flush=True)
            if code not in (0, 3, 4, 5):
                print(tail)
            if only is None:
                worst, total = (peak - base) / largest, peak / largest
    print(f"default scan: the huge row added {worst:.1f} x its size to the peak RSS (limit {args.limit:g} x); "
          f"total peak {total:.1f} x the row, the rest is the baseline (imports, models, the other rows)")
    return 0 if worst <= args.limit else 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--only", default=None, help="--only for the scan (default: the default checks)")
    ap.add_argument("--extra", default="", help="more scan options, e.g. '--fast'")
    ap.add_argument("--stages", action="store_true", help="each whole-dataset stage alone, then the default scan")
    ap.add_argument("--limit", type=float, default=20.0, help="--stages: the largest (peak RSS - baseline peak) / row size allowed")
    args = ap.parse_args()
    if args.stages:
        raise SystemExit(per_stage(args))
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.jsonl", Path(tmp) / "small.jsonl"
        largest = write_rows(big, args.rows, args.mb)
        write_rows(small, args.rows, 0)
        code0, base, wall0, tail0 = peak_of_scan(small, Path(tmp) / "out0", args)
        code, peak, wall, tail = peak_of_scan(big, Path(tmp) / "out", args)
    added = peak - base
    print(f"rows {args.rows}, largest row {largest / 1e6:.1f} MB, scan exit {code}, {wall:.1f} s "
          f"(baseline exit {code0}, {wall0:.1f} s)")
    print(f"peak RSS {peak / 1e9:.2f} GB = {peak / largest:.1f} x the largest row; baseline (an ordinary row in "
          f"its place) {base / 1e9:.2f} GB; the huge row added {added / 1e6:.0f} MB = {added / largest:.1f} x its size")
    for c, t in ((code, tail), (code0, tail0)):
        if c not in (0, 3, 4, 5):
            print(t)


if __name__ == "__main__":
    main()
