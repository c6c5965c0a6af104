"""On the real HH helpful-base test split the scan reports exactly the degenerate pairs the file holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import CHEAP

import pairaudit

MARK = "\n\nAssistant:"


def _independent_counts(path: Path) -> dict[str, set[int]]:
    """Count degenerate pairs with plain string operations, independent of pairaudit's parser."""
    out: dict[str, set[int]] = {"identical_pair": set(), "empty_response": set(), "prompt_mismatch": set()}
    with open(path, encoding="utf-8") as fh:
        for row, line in enumerate(fh):
            d = json.loads(line)
            c, r = d["chosen"], d["rejected"]
            if " ".join(c.split()) == " ".join(r.split()):
                out["identical_pair"].add(row)
            if c[: c.rfind(MARK)] != r[: r.rfind(MARK)]:
                out["prompt_mismatch"].add(row)
            elif any(re.search(r"(?:^|\n)[ \t]*(?:Human|Assistant)[ \t]*:", side[side.rfind(MARK) + len(MARK):])
                     for side in (c, r)):
                out["prompt_mismatch"].add(row)  # the same history, a reply that writes a speaker label
            k = 0
            while k < min(len(c), len(r)) and c[k] == r[k]:
                k += 1
            cut = c.rfind(MARK, 0, k) + len(MARK)  # shared prompt ends at the last shared assistant marker
            for resp in (c[cut:], r[cut:]):
                if not resp.strip():
                    out["empty_response"].add(row)
    return out


def test_hh_degenerate_pairs_match_independent_count(hh_path: Path, tmp_path: Path) -> None:
    expected = _independent_counts(hh_path)
    assert expected["identical_pair"] and expected["empty_response"]  # the file really holds some
    audit = pairaudit.scan(hh_path, out=tmp_path / "out", only=CHEAP, log=lambda m: None)
    f = audit.findings
    for check, rows in expected.items():
        assert set(f.filter(f["check"] == check)["row"].to_list()) == rows, check
    n_records = sum(1 for line in open(hh_path, encoding="utf-8") if line.strip())
    t = audit.totals
    assert t["input"] == n_records == 2354
    assert t["kept"] + t["dropped"] == n_records
    kept_lines = (tmp_path / "out" / "clean.jsonl").read_text(encoding="utf-8").splitlines()
    dropped_lines = (tmp_path / "out" / "dropped.jsonl").read_text(encoding="utf-8").splitlines()
    assert (len(kept_lines), len(dropped_lines)) == (t["kept"], t["dropped"])
    dropped_rows = {json.loads(x)["row"] for x in dropped_lines}
    # identical and empty pairs drop; prompt_mismatch drops a differing history or a chosen reply that invents
    # turns, and flags (keeps) a rejected reply that does, or a reply that writes a speaker label
    pm = f.filter(f["check"] == "prompt_mismatch")
    flagged = pm.filter(pm["action"] == "flag")
    assert flagged.height and all(fld == "rejected" or "speaker label" in d
                                  for fld, d in zip(flagged["field"], flagged["detail"]))
    pm_drops = set(pm.filter(pm["action"] == "drop")["row"].to_list())
    assert dropped_rows == expected["identical_pair"] | expected["empty_response"] | pm_drops
    assert audit.report["source"]["format"] == "implicit_hh"
