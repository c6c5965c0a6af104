"""Review decisions (keep / drop / flip) recorded in ``OUT/decisions.jsonl``.

One JSON object per line: ``{"row", "decision", "note", "pair_hash"}``; later lines win. A decision
whose ``pair_hash`` no longer matches the row (the source changed) is ignored and reported.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from pairaudit.errors import InputError

DECISIONS = ("keep", "drop", "flip")
FILENAME = "decisions.jsonl"


@dataclass(frozen=True)
class Decision:
    row: int
    decision: str
    note: str = ""
    pair_hash: str | None = None


def load_decisions(path: str | os.PathLike[str]) -> dict[int, Decision]:
    p = Path(path)
    out: dict[int, Decision] = {}
    if not p.exists():
        return out
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                dec = Decision(int(d["row"]), str(d["decision"]), str(d.get("note", "")), d.get("pair_hash"))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{p} line {n} is not a decision: {exc}",
                                 expected='{"row": 12, "decision": "keep|drop|flip", "note": "..."}') from exc
            if dec.decision not in DECISIONS:
                raise InputError(f"{p} line {n}: decision {dec.decision!r}", expected=" | ".join(DECISIONS))
            out[dec.row] = dec
    return out


def append_decision(path: str | os.PathLike[str], decision: Decision) -> None:
    if decision.decision not in DECISIONS:
        raise ValueError(f"decision must be one of {DECISIONS}, not {decision.decision!r}")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(decision), ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
