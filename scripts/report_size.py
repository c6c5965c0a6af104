"""Size of report.html for a scan with many flagged rows, on real-length HH rows.

    python scripts/report_size.py [ROWS]      # default 15000 rows; prints flagged rows and the page size

The rows come from ../shared/tools/make_scale_set.py (real HH transcripts recombined); the scan runs the
cheap per-pair and exact checks with ``max_length=96`` so that most real rows are ``too_long`` (flagged):
the report then lists over 10,000 flagged rows. Exit status 1 when the page is 1 MB or more.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CHECKS = ["malformed_record", "empty_prompt", "empty_response", "all_padding", "out_of_vocab", "encoding_error",
          "too_long", "truncation_identical", "identical_pair", "near_identical_pair", "prompt_mismatch",
          "duplicate_pair", "contradictory_pair", "length_outlier"]


def main(n: int) -> int:
    import polars as pl

    import pairaudit

    tmp = Path(tempfile.mkdtemp(prefix="pairaudit-report-size-"))
    src = tmp / "hh.jsonl"
    subprocess.run([sys.executable, str(SHARED / "tools" / "make_scale_set.py"),
                    str(SHARED / "data" / "hh-rlhf" / "helpful-base-test.jsonl"), str(n), str(src)], check=True)
    t0 = time.time()
    pairaudit.scan(src, out=tmp / "out", only=CHECKS, max_length=96, progress=False, log=lambda m: None)
    scan_s = time.time() - t0
    f = pl.read_parquet(tmp / "out" / "findings.parquet")
    page = (tmp / "out" / "report.html").resolve()
    size = page.stat().st_size
    t0 = time.time()
    from pairaudit.report import render_report

    render_report(tmp / "out")
    render_s = time.time() - t0
    print(f"rows {n}, flagged rows {f['row'].n_unique()}, findings {f.height}")
    print(f"report.html {size} bytes ({size / 1e6:.2f} MB); scan {scan_s:.0f}s, render {render_s:.1f}s")
    print(f"under 1 MB: {'yes' if size < 1_000_000 else 'NO'}  ({page})")
    if f["row"].n_unique() < 10_000:
        print("note: fewer than 10,000 flagged rows: pass more ROWS")
    return 0 if size < 1_000_000 else 1


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15000))
