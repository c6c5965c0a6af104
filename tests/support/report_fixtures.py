"""A small hand-written output folder (docs/contract.md) for report and review tests.

Rows: 0 normal, 1 identical pair, 2 HTML/script payloads, 3 duplicate of 0, 4 contradiction of 0,
5 malformed JSON line, 6 HH implicit-prompt strings, 7 near-identical pair.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import polars as pl

from pairaudit.config import ScanConfig

TITLE_PAYLOAD = "PWNED"


def payloads(beacon: str = "http://127.0.0.1:9/beacon.png") -> dict[str, str]:
    return {
        "prompt": f"Explain this HTML: <script>document.title='{TITLE_PAYLOAD}';window.pwned=1</script>",
        "chosen": f"It is an image tag <img src=x onerror=\"document.title='{TITLE_PAYLOAD}'\"> that runs code."
                  " [bold red]not rich markup[/bold red]",
        "rejected": f"</pre></div><img src=\"{beacon}\"><iframe src=\"{beacon}\"></iframe>"
                    f"<style>body{{display:none}}</style><script>document.title='{TITLE_PAYLOAD}'</script>",
    }


def records(beacon: str = "http://127.0.0.1:9/beacon.png") -> list[object]:
    base = {"prompt": "What is the capital of France?", "chosen": "The capital of France is Paris.",
            "rejected": "France has no capital, it is ruled from Lyon."}
    return [
        base,
        {"prompt": "Say hi", "chosen": "Hello there!", "rejected": "Hello there!"},
        payloads(beacon),
        dict(base),
        {"prompt": base["prompt"], "chosen": base["rejected"], "rejected": base["chosen"]},
        "{not json",
        {"chosen": "\n\nHuman: Name a fruit.\n\nAssistant: An apple is a fruit.",
         "rejected": "\n\nHuman: Name a fruit.\n\nAssistant: A carrot."},
        {"prompt": "Count to three.", "chosen": "One, two, three.", "rejected": "One, two, three!"},
    ]


DROPPED = {1: ["identical_pair"], 3: ["duplicate_pair"], 5: ["malformed_record"]}


def _hash(rec: object) -> str | None:
    if not isinstance(rec, dict):
        return None
    return hashlib.sha256(json.dumps(rec, sort_keys=True).encode()).hexdigest()[:32]


def write_out(tmp: Path, *, beacon: str = "http://127.0.0.1:9/beacon.png", with_source: bool = True,
              with_scores: bool = True) -> Path:
    """Write source.jsonl and an output folder ``tmp/out``; returns the folder."""
    recs = records(beacon)
    tmp.mkdir(parents=True, exist_ok=True)
    src = tmp / "source.jsonl"
    src.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in recs), encoding="utf-8")
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    findings = pl.DataFrame(
        {
            "row": [1, 3, 0, 4, 7, 5, 2, 6],
            "check": ["identical_pair", "duplicate_pair", "contradictory_pair", "contradictory_pair",
                      "near_identical_pair", "malformed_record", "encoding_error", "length_outlier"],
            "action": ["drop", "drop", "flag", "flag", "flag", "drop", "flag", "flag"],
            "field": [None, None, None, None, "chosen", None, "rejected", "rejected"],
            "score": [1.0, None, None, None, 0.97, None, 0.5, 3.2],
            "group": [None, 0, 0, 0, None, None, None, None],
            "detail": ["chosen == rejected", "same as row 0", "row 4 prefers the other response",
                       "row 0 prefers the other response", "differ by 1 character", "line is not JSON",
                       "<b>control</b> <script>alert(1)</script>", "3.2 MADs below the median"],
        },
        schema={"row": pl.Int64, "check": pl.Utf8, "action": pl.Utf8, "field": pl.Utf8, "score": pl.Float64,
                "group": pl.Int64, "detail": pl.Utf8},
    )
    findings.write_parquet(out / "findings.parquet")
    if with_scores:
        def toks(r: object, k: str) -> int | None:
            if not isinstance(r, dict):
                return None
            return len(str(r.get(k, "")).split())

        scores = pl.DataFrame({
            "row": list(range(len(recs))),
            "pair_hash": [_hash(r) for r in recs],
            "prompt_tokens": [toks(r, "prompt") for r in recs],
            "chosen_tokens": [toks(r, "chosen") for r in recs],
            "rejected_tokens": [toks(r, "rejected") for r in recs],
            "near_identical_pair_score": [0.4, 1.0, 0.1, 0.4, 0.4, None, 0.3, 0.97],
            "ref_margin": [1.5, 0.0, -2.0, 1.5, -1.5, None, 0.7, 0.1],
            "likely_flipped_score": [0.1, 0.5, 0.8, 0.1, 0.9, None, 0.2, 0.4],
        }, schema_overrides={"prompt_tokens": pl.Int64, "chosen_tokens": pl.Int64, "rejected_tokens": pl.Int64})
        scores = scores.with_columns((pl.col("chosen_tokens") / pl.col("rejected_tokens")).alias("length_ratio"))
        scores.write_parquet(out / "scores.parquet")
    checks = {
        name: {"description": f"{name} description", "default_action": action, "action": action,
               "thresholds": {}, "status": "ran", "reason": "",
               "findings": findings.filter(pl.col("check") == name).height,
               "rows": findings.filter(pl.col("check") == name)["row"].n_unique()}
        for name, action in [("malformed_record", "drop"), ("identical_pair", "drop"), ("encoding_error", "flag"),
                             ("near_identical_pair", "flag"), ("length_outlier", "flag"), ("duplicate_pair", "drop"),
                             ("contradictory_pair", "flag")]
    }
    checks["near_identical_pair"]["thresholds"] = {"min_ratio": 0.95}
    checks["likely_flipped"] = {"description": "rejected looks better", "default_action": "flag", "action": "flag",
                                "thresholds": {}, "status": "skipped", "reason": "needs --reference MODEL",
                                "findings": 0, "rows": 0}
    checks["near_duplicate_pair"] = {"description": "embedding near-duplicates", "default_action": "drop",
                                     "action": "drop", "thresholds": {}, "status": "failed",
                                     "reason": "ModelError: embedder <b>missing</b>", "findings": 0, "rows": 0}
    report = {
        "pairaudit_version": "0.1.0",
        "source": {"path": str(src) if with_source else str(tmp / "gone.jsonl"), "kind": "jsonl",
                   "format": "standard"},
        "totals": {"input": len(recs), "kept": len(recs) - len(DROPPED), "dropped": len(DROPPED), "flagged": 4},
        "checks": checks,
        "config": {**ScanConfig().to_json(), "embedder": "<script>alert('config')</script>"},
        "models": {"tokenizer": {"id": "bundled SmolLM2-135M", "sha256": "abc123"}},
        "stats": {"likely_flipped": {"estimated_flip_rate": 0.125}},
        "decisions": {},
    }
    (out / "report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    with open(out / "clean.jsonl", "w", encoding="utf-8") as fh:
        for i, r in enumerate(recs):
            if i not in DROPPED:
                fh.write(json.dumps(r) + "\n")
    with open(out / "dropped.jsonl", "w", encoding="utf-8") as fh:
        for i, reasons in DROPPED.items():
            r = recs[i]
            line = {"row": i, "reasons": reasons, "record": r if isinstance(r, dict) else None}
            if not isinstance(r, dict):
                line["raw"] = r
            fh.write(json.dumps(line) + "\n")
    return out
