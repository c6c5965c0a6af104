"""The issue-34 labels parse and each refers to a row of its kind's file (data/precision)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data" / "precision"
FIELDS = {"kind", "row_sha", "check", "label", "reason", "labelled_at_commit"}


def _sha(rec: dict) -> str:
    text = "\x00".join(str(rec.get(k) or "") for k in ("prompt", "chosen", "rejected"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_every_label_parses_and_names_a_row_of_its_kind() -> None:
    labels = [json.loads(line) for line in (DATA / "labels.jsonl").open() if line.strip()]
    assert labels, "data/precision/labels.jsonl holds no label"
    shas: dict[str, set[str]] = {}
    for x in labels:
        assert set(x) == FIELDS, x
        assert x["label"] in {"right", "wrong", "debatable"}, x
        assert x["reason"].strip(), x
        if x["kind"] not in shas:
            rows = (DATA / f"{x['kind']}.jsonl").open()
            shas[x["kind"]] = {_sha(json.loads(line)) for line in rows}
        assert x["row_sha"] in shas[x["kind"]], f"label for a row not in {x['kind']}.jsonl: {x}"
    keys = [(x["kind"], x["row_sha"], x["check"]) for x in labels]
    assert len(keys) == len(set(keys)), "a (kind, row_sha, check) is labelled twice"
