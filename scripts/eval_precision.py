"""Precision per (check, data kind) from human labels (issue 34).

    python scripts/eval_precision.py [--kinds hh,ultrafeedback,multipair] [--repo DIR] [--reuse]
                                     [--sample N] [--write]

Scans each data/precision/<kind>.jsonl with the default scan (CPU; under `flock LOCK` with --lock LOCK; code from
--repo, default this checkout), joins the findings with data/precision/labels.jsonl by
(kind, row_sha, check) where row_sha = sha256(prompt + "\\0" + chosen + "\\0" + rejected) of the row as read
(implicit-prompt rows: the raw chosen/rejected with an empty prompt), and prints per (check, kind, action):
findings, labelled, right, wrong, debatable, precision = right / (right + wrong) with the sample size.
--sample N prints up to N unlabelled findings per (check, kind), seeded (34), to label.
--write puts the table into docs/checks.md between the precision markers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "precision"
KINDS = ("hh", "ultrafeedback", "math", "short_answer", "multipair")
BEGIN, END = "<!-- precision table: begin -->", "<!-- precision table: end -->"


def row_sha(rec: dict) -> str:
    """The label key of one input record.

    Args:
        rec: a JSON record with chosen/rejected and optionally prompt.

    Returns:
        sha256 hex of prompt + NUL + chosen + NUL + rejected.
    """
    text = "\x00".join(str(rec.get(k) or "") for k in ("prompt", "chosen", "rejected"))
    return hashlib.sha256(text.encode()).hexdigest()


def scan(kind: str, repo: Path, out: Path, lock: str | None = None) -> None:
    """Run the default scan of one kind under the shared lock.

    Args:
        kind: data kind (file stem).
        repo: checkout whose pairaudit runs.
        out: output folder.
        lock: a file to hold with flock while scanning (a machine shared with other benchmarks), or None.
    """
    env = dict(os.environ, PYTHONPATH=str(repo), HF_HUB_OFFLINE="1")
    cmd = (["flock", lock] if lock else []) + [sys.executable, "-m", "pairaudit.cli", "scan",
           str(DATA / f"{kind}.jsonl"), "--out", str(out)]
    # cwd=repo: `python -m` puts the working directory first on sys.path, so run from the checkout under test
    done = subprocess.run(cmd, env=env, cwd=repo, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if not (out / "findings.parquet").exists():  # exit 3 / 5 still write outputs; a crash does not
        sys.exit(f"the scan of {kind} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")


def findings(kind: str, out: Path) -> list[dict]:
    """Findings of a scan with the row's label key.

    Args:
        kind: data kind.
        out: scan output folder.

    Returns:
        One dict per finding: kind, row, row_sha, check, action, detail.
    """
    recs = [json.loads(line) for line in (DATA / f"{kind}.jsonl").open()]
    f = pl.read_parquet(out / "findings.parquet")
    return [{"kind": kind, "row": r["row"], "row_sha": row_sha(recs[r["row"]]), "check": r["check"],
             "action": r["action"], "detail": r["detail"]} for r in f.to_dicts()]


def load_labels() -> dict[tuple, dict]:
    """The labels file keyed by (kind, row_sha, check).

    Returns:
        Label records by key.
    """
    path = DATA / "labels.jsonl"
    if not path.exists():
        return {}
    labels = [json.loads(line) for line in path.open() if line.strip()]
    return {(x["kind"], x["row_sha"], x["check"]): x for x in labels}


def table(found: list[dict], labels: dict[tuple, dict]) -> list[dict]:
    """Per (check, kind, action) counts and precision (a drop and a flag of one check are judged apart).

    Args:
        found: all findings.
        labels: labels by key.

    Returns:
        One dict per (check, kind).
    """
    groups: dict[tuple, list[dict]] = {}
    for x in found:
        groups.setdefault((x["check"], x["kind"], x["action"]), []).append(x)
    rows = []
    for (check, kind, _), xs in sorted(groups.items()):
        got = [labels[(kind, x["row_sha"], check)]["label"] for x in xs if (kind, x["row_sha"], check) in labels]
        right, wrong, deb = got.count("right"), got.count("wrong"), got.count("debatable")
        prec = f"{right / (right + wrong):.0%} (n={right + wrong})" if right + wrong else "-"
        rows.append({"check": check, "kind": kind, "action": "/".join(sorted({x["action"] for x in xs})),
                     "findings": len(xs), "labelled": len(got), "right": right, "wrong": wrong,
                     "debatable": deb, "precision": prec, "unlabelled": len(xs) - len(got)})
    return rows


def markdown(rows: list[dict]) -> str:
    """The table as Markdown.

    Args:
        rows: output of table().

    Returns:
        Markdown text.
    """
    cols = ["check", "kind", "action", "findings", "labelled", "right", "wrong", "debatable", "precision",
            "unlabelled"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def sample(found: list[dict], labels: dict[tuple, dict], n: int) -> None:
    """Print up to n unlabelled findings per (check, kind), seeded.

    Args:
        found: all findings.
        labels: labels by key.
        n: per-group sample size.
    """
    groups: dict[tuple, list[dict]] = {}
    for x in found:
        groups.setdefault((x["check"], x["kind"]), []).append(x)
    for (check, kind), xs in sorted(groups.items()):
        xs = sorted(xs, key=lambda x: x["row"])
        random.Random(34).shuffle(xs)
        done = sum((kind, x["row_sha"], check) in labels for x in xs[:n])
        for x in [x for x in xs[:n] if (kind, x["row_sha"], check) not in labels][: n - done]:
            print(json.dumps(x, ensure_ascii=False))


def write_doc(md: str) -> None:
    """Put the table into docs/checks.md between the markers (appended with them if absent).

    Args:
        md: the Markdown table.
    """
    doc = ROOT / "docs" / "checks.md"
    text = doc.read_text()
    block = f"{BEGIN}\n{md}\n{END}"
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n## Precision on real data (issue 34)\n\n" + block + "\n"
    doc.write_text(text)


def main() -> None:
    """Parse arguments, scan, print."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--repo", default=str(ROOT))
    ap.add_argument("--outdir", default="/tmp/eval_precision")
    ap.add_argument("--reuse", action="store_true", help="reuse existing scan outputs in --outdir")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--lock", metavar="FILE", help="hold this file with flock while scanning (shared machines)")
    ap.add_argument("--no-lock", action="store_true", help="(the default; kept for old command lines)")
    a = ap.parse_args()
    found: list[dict] = []
    for kind in [k for k in a.kinds.split(",") if (DATA / f"{k}.jsonl").exists()]:
        out = Path(a.outdir) / kind
        if not (a.reuse and (out / "findings.parquet").exists()):
            scan(kind, Path(a.repo), out, lock=a.lock)
        found += findings(kind, out)
    labels = load_labels()
    if a.sample:
        sample(found, labels, a.sample)
        return
    md = markdown(table(found, labels))
    print(md)
    if a.write:
        write_doc(md)


if __name__ == "__main__":
    main()
