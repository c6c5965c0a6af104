"""Peak memory of a scan with one huge response among ordinary rows (issue 23: a 50 MB response among
100 rows peaked at 9.3 GB). Prints the largest row's size, the peak RSS of the scan process and their
ratio. Usage: python scripts/bench_big_row.py [--mb 50] [--rows 100] [--only CHECKS]"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--only", default=None, help="--only for the scan (default: the default checks)")
    ap.add_argument("--extra", default="", help="more scan options, e.g. '--fast'")
    args = ap.parse_args()
    rng = random.Random(0)
    words = "the of and to in is was for that on with as by at from it an be this are or".split()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.jsonl"
        with open(src, "w", encoding="utf-8") as fh:
            for i in range(args.rows):
                chosen = f"A careful answer number {i}: " + " ".join(rng.choice(words) for _ in range(40))
                if i == args.rows // 2:
                    n = int(args.mb * 1e6)
                    chosen = (" ".join(rng.choice(words) for _ in range(n // 3)))[:n]
                rec = {"prompt": f"Question {i}?", "chosen": chosen, "rejected": f"No {i}, " + rng.choice(words)}
                fh.write(json.dumps(rec) + "\n")
        largest = max(len(line) for line in open(src, "rb"))
        cmd = [sys.executable, "-m", "pairaudit.cli", "scan", str(src), "--out", str(Path(tmp) / "out"), "-q",
               *(["--only", args.only] if args.only else []), *args.extra.split()]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        wall = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
    print(f"rows {args.rows}, largest row {largest / 1e6:.1f} MB, scan exit {proc.returncode}, {wall:.1f} s")
    print(f"peak RSS {peak / 1e9:.2f} GB = {peak / largest:.1f} x the largest row")
    if proc.returncode not in (0, 3, 4, 5):
        print(proc.stdout[-2000:], proc.stderr[-2000:])


if __name__ == "__main__":
    main()
