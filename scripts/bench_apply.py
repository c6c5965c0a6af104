"""Benchmark: `apply` from the folder's own findings against the scan that wrote the folder.

    python scripts/bench_apply.py --rows 20000            # real-length HH rows (../shared/tools/make_scale_set.py)
    python scripts/bench_apply.py --rows 100000 --compare # + a rescan with the same decisions, outputs compared

Scans N real-length rows with the default checks, records review decisions (1% of the flagged rows dropped,
a dropped row kept, a flagged row flipped), then times ``pairaudit.apply_decisions`` (rows move between
clean and dropped, no check or model re-run) and prints its time as a share of the scan's. ``--compare``
also applies the same decisions by a rescan (``rescan=True``) into a copy and checks the outputs are the
same bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
HH = SHARED / "data" / "hh-rlhf" / "helpful-base-test.jsonl"


def make_rows(n: int, path: Path) -> None:
    subprocess.run([sys.executable, str(SHARED / "tools" / "make_scale_set.py"), str(HH), str(n), str(path)],
                   check=True, stdout=subprocess.DEVNULL)


def decide(out: Path) -> int:
    import polars as pl

    from pairaudit.review import Review

    f = pl.read_parquet(out / "findings.parquet", columns=["row", "action"])
    dropped = sorted(set(f.filter(pl.col("action") == "drop")["row"]))
    flagged = sorted(set(f.filter(pl.col("action") == "flag")["row"]) - set(dropped))
    rv = Review(out, reviewer="bench")
    rv.decide_many(flagged[::100], "drop", note="bench")
    if dropped:
        rv.decide(dropped[0], "keep")
    if len(flagged) > 1:
        rv.decide(flagged[1], "flip")
    return len(rv.decisions())


def outputs(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())
            if p.is_file() and p.name not in ("timings.json", "decisions.jsonl")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--work", type=Path, default=None, help="folder for the data and outputs (default: a temp one)")
    ap.add_argument("--compare", action="store_true", help="also apply by a rescan and compare the outputs")
    args = ap.parse_args()

    import pairaudit
    from pairaudit.api import apply_decisions

    work = args.work or Path(tempfile.mkdtemp(prefix="bench-apply-"))
    work.mkdir(parents=True, exist_ok=True)
    src = work / f"hh-{args.rows}.jsonl"
    if not src.exists():
        make_rows(args.rows, src)
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    audit = pairaudit.scan(src, out=out, quiet=True)
    scan_s = time.perf_counter() - t
    n = decide(out)
    logs: list[str] = []
    t = time.perf_counter()
    applied = apply_decisions(out, progress=False, log=logs.append)
    apply_s = time.perf_counter() - t
    how = "from findings" if any("own findings" in m for m in logs) else "RESCAN"
    result = {"rows": args.rows, "scan_s": round(scan_s, 2), "decisions": n, "apply_s": round(apply_s, 2),
              "apply_share_of_scan": round(apply_s / scan_s, 4), "apply_did": how,
              "kept": [audit.totals["kept"], applied.totals["kept"]]}
    if args.compare:
        again = work / "rescan"
        shutil.rmtree(again, ignore_errors=True)
        again.mkdir()
        shutil.copyfile(out / "decisions.jsonl", again / "decisions.jsonl")
        t = time.perf_counter()
        pairaudit.scan(src, out=again, quiet=True)
        result["rescan_with_decisions_s"] = round(time.perf_counter() - t, 2)
        a, b = outputs(out), outputs(again)
        result["outputs_equal"] = a == b
        result["differ"] = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
