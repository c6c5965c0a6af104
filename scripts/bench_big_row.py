"""Peak memory of a scan with one huge response among ordinary rows (issue 23: a 50 MB response among
100 rows peaked at 9.3 GB). Runs the same scan twice in fresh processes: once with the huge row, once
with an ordinary row in its place (the baseline: imports, models, the other rows), and prints each peak
RSS and what the huge row added, as a multiple of its size.

    python scripts/bench_big_row.py [--mb 5] [--rows 100] [--only CHECKS] [--extra '--fast']
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--only", default=None, help="--only for the scan (default: the default checks)")
    ap.add_argument("--extra", default="", help="more scan options, e.g. '--fast'")
    args = ap.parse_args()
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
