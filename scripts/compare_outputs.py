"""Scan the shipped example and compare every output file against a baseline folder, byte for byte.

    python scripts/compare_outputs.py OUT                      # scan into OUT (default config)
    python scripts/compare_outputs.py OUT --baseline BASE      # scan into OUT, then compare with BASE
    python scripts/compare_outputs.py OUT --baseline BASE --no-scan   # compare two existing folders

Extra scan options go after ``--`` (e.g. ``-- --only identical_pair``). The scan runs this checkout's
``pairaudit.cli`` in a subprocess on a copy of the example at a fixed temp path (report.json records
the source path, so a baseline made from another checkout compares equal). Every file written to the output folder is compared (timings.json
holds run-specific figures and is skipped); parquet files are also compared as tables (columns, dtypes,
the rows that differ), JSON files key by key, text files line by line. Exit status 0 when every file is
byte-identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "hh-rlhf-helpful-base-500.jsonl"
SKIP = {"timings.json"}  # run-specific by contract


def example_copy() -> Path:
    """The example at a fixed path outside the checkout: report.json records the source path, so two
    checkouts compare equal only when they scan the same path."""
    dst = Path(tempfile.gettempdir()) / "pairaudit-compare" / EXAMPLE.name
    if not dst.exists() or dst.read_bytes() != EXAMPLE.read_bytes():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLE, dst)
    return dst


def scan(out: Path, extra: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "pairaudit.cli", "scan", str(example_copy()), "--out", str(out), *extra]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    print(f"exit code {proc.returncode}")
    if proc.returncode not in (0, 3, 4):
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"scan failed with exit code {proc.returncode}")


def output_files(folder: Path) -> dict[str, Path]:
    """The outputs in ``folder`` (symlinks into .pairaudit/current resolved; folders walked)."""
    files: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name in SKIP:
            continue
        real = entry.resolve()
        if real.is_dir():
            for p in sorted(real.rglob("*")):
                if p.is_file():
                    files[f"{entry.name}/{p.relative_to(real)}"] = p
        else:
            files[entry.name] = real
    return files


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()[:16]


def diff_parquet(a: Path, b: Path) -> list[str]:
    import polars as pl

    x, y = pl.read_parquet(a), pl.read_parquet(b)
    out = []
    if x.columns != y.columns:
        out.append(f"  columns differ: only in baseline {sorted(set(x.columns) - set(y.columns))}, "
                   f"only in new {sorted(set(y.columns) - set(x.columns))}, order same: "
                   f"{[c for c in x.columns if c in y.columns] == [c for c in y.columns if c in x.columns]}")
    for c in (c for c in x.columns if c in y.columns):
        if x[c].dtype != y[c].dtype:
            out.append(f"  column {c}: dtype {x[c].dtype} -> {y[c].dtype}")
    if x.height != y.height:
        out.append(f"  rows: {x.height} -> {y.height}")
    n = min(x.height, y.height)
    for c in (c for c in x.columns if c in y.columns):
        xs, ys = x[c][:n], y[c][:n]
        if xs.dtype != ys.dtype:
            continue
        same = (xs == ys) | (xs.is_null() & ys.is_null())
        if xs.dtype in (pl.Float32, pl.Float64):
            same = same | (xs.is_nan() & ys.is_nan())
        bad = [i for i, v in enumerate(same.fill_null(False).to_list()) if not v]
        if bad:
            out.append(f"  column {c}: {len(bad)} row(s) differ, first at index {bad[:5]}: "
                       f"{xs[bad[0]]!r} -> {ys[bad[0]]!r}")
    if not out:
        out.append("  tables equal (same columns, dtypes and values): the bytes differ in parquet metadata/encoding")
    return out


def _walk(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                out.append(f"  {path}.{k}: only in baseline")
            elif k not in a:
                out.append(f"  {path}.{k}: only in new")
            else:
                _walk(a[k], b[k], f"{path}.{k}", out)
        if [k for k in a if k in b] != [k for k in b if k in a]:
            out.append(f"  {path}: key order differs")
    elif a != b:
        out.append(f"  {path}: {json.dumps(a)[:200]} -> {json.dumps(b)[:200]}")


def diff_json(a: Path, b: Path) -> list[str]:
    out: list[str] = []
    _walk(json.loads(a.read_text(encoding="utf-8")), json.loads(b.read_text(encoding="utf-8")), "$", out)
    return out or ["  same JSON value, different bytes (formatting)"]


def diff_text(a: Path, b: Path) -> list[str]:
    x = a.read_text(encoding="utf-8", errors="replace").splitlines()
    y = b.read_text(encoding="utf-8", errors="replace").splitlines()
    lines = list(difflib.unified_diff(x, y, "baseline", "new", n=1, lineterm=""))
    return ["  " + line[:300] for line in lines[:60]] + ([f"  ... {len(lines) - 60} more diff lines"]
                                                        if len(lines) > 60 else [])


def compare(base: Path, new: Path) -> bool:
    a, b = output_files(base), output_files(new)
    ok = True
    for name in sorted(set(a) | set(b)):
        if name not in b or name not in a:
            print(f"DIFF {name}: only in {'baseline' if name in a else 'new'}")
            ok = False
            continue
        if a[name].read_bytes() == b[name].read_bytes():
            print(f"same {name} ({a[name].stat().st_size} bytes, sha256 {digest(a[name])})")
            continue
        ok = False
        print(f"DIFF {name}: {a[name].stat().st_size} -> {b[name].stat().st_size} bytes")
        if name.endswith(".parquet"):
            lines = diff_parquet(a[name], b[name])
        elif name.endswith(".json"):
            lines = diff_json(a[name], b[name])
        else:
            lines = diff_text(a[name], b[name])
        print("\n".join(lines))
    print("ALL IDENTICAL" if ok else "OUTPUTS DIFFER")
    return ok


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="folder to scan into (or the new folder with --no-scan)")
    ap.add_argument("--baseline", type=Path, help="folder to compare against")
    ap.add_argument("--no-scan", action="store_true", help="only compare OUT with --baseline")
    args = ap.parse_args(argv)
    if not args.no_scan:
        scan(args.out, extra)
    if args.baseline:
        raise SystemExit(0 if compare(args.baseline, args.out) else 1)


if __name__ == "__main__":
    main()
