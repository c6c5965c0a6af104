"""Time report.html rendering on a synthetic output folder: python scripts/bench_report.py [ROWS]."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl


def main(n: int) -> None:
    from pairaudit.config import ScanConfig
    from pairaudit.report import render_report

    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp(prefix="pairaudit-bench-report-"))
    src = tmp / "src.jsonl"
    words = np.array("the a cat dog sat on mat quick brown fox jumps over lazy answer question".split())
    with open(src, "w", encoding="utf-8") as fh:
        for i in range(n):
            c = " ".join(rng.choice(words, 60))
            r = " ".join(rng.choice(words, 50))
            fh.write(json.dumps({"prompt": f"question {i}?", "chosen": c, "rejected": r}) + "\n")
    out = tmp / "out"
    out.mkdir()
    ct, rt = rng.integers(5, 800, n), rng.integers(5, 800, n)
    pl.DataFrame({"row": np.arange(n), "pair_hash": [f"{i:032x}" for i in range(n)],
                  "prompt_tokens": rng.integers(3, 300, n), "chosen_tokens": ct, "rejected_tokens": rt,
                  "length_ratio": ct / rt, "near_identical_pair_score": rng.random(n),
                  "pair_cosine": rng.random(n), "ref_margin": rng.normal(0, 3, n),
                  "likely_flipped_score": rng.random(n)}).write_parquet(out / "scores.parquet")
    k = max(1, n // 20)
    rows = np.sort(rng.choice(n, k, replace=False))
    checks = ["near_identical_pair", "length_outlier", "duplicate_pair", "likely_flipped"]
    chk = [checks[i % 4] for i in range(k)]
    pl.DataFrame({"row": rows, "check": chk, "action": ["flag"] * k, "field": [None] * k,
                  "score": rng.random(k), "group": [int(r) // 10 * 10 if c == "duplicate_pair" else None
                                                    for r, c in zip(rows, chk, strict=True)],
                  "detail": ["synthetic"] * k},
                 schema_overrides={"field": pl.Utf8, "group": pl.Int64}).write_parquet(out / "findings.parquet")
    report = {"pairaudit_version": "bench", "source": {"path": str(src), "kind": "jsonl", "format": "standard"},
              "totals": {"input": n, "kept": n, "dropped": 0, "flagged": k},
              "checks": {c: {"description": c, "action": "flag", "status": "ran", "reason": "", "thresholds": {},
                             "findings": chk.count(c), "rows": chk.count(c)} for c in checks},
              "config": ScanConfig().to_json(), "models": {}, "stats": {}, "decisions": {}}
    (out / "report.json").write_text(json.dumps(report), encoding="utf-8")
    t = time.perf_counter()
    path = render_report(out)
    first = time.perf_counter() - t
    t = time.perf_counter()
    render_report(out)
    second = time.perf_counter() - t
    print(f"rows={n} findings={k} render_cold_s={first:.2f} render_warm_s={second:.2f} "
          f"html_kb={path.stat().st_size / 1024:.0f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
