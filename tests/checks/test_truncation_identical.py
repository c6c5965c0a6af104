"""truncation_identical: sides that differ only past the point the trainer's truncation keeps (a
zero-gradient pair); the real SmolLM2 tokenizer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.checks import found, scan_cheap

from pairaudit.checks.length import TruncationIdentical
from pairaudit.trainer.tokenizer import DPOTokenizer

SHARED_START = "Here is a long shared opening that both answers use before they differ. " * 6
REC = {"prompt": "Continue.", "chosen": SHARED_START + "Answer A.", "rejected": SHARED_START + "Answer B."}


@pytest.mark.parametrize(("mode", "max_length", "hit"), [
    ("keep_start", 64, True), ("keep_end", 64, False), ("keep_start", 1024, False)])
def test_sides_equal_after_truncation(mode: str, max_length: int, hit: bool,
                                      make_tok: Callable[..., DPOTokenizer]) -> None:
    got = found(TruncationIdentical, REC, make_tok(max_length=max_length, truncation_mode=mode))
    assert [f for f, _ in got] == (["rejected"] if hit else [])
    assert all(d.startswith(f"after truncation ({mode}, max_length {max_length}) both keep the same ") for _, d in got)


@pytest.mark.parametrize("rec", [
    {"prompt": "Continue.", "chosen": SHARED_START, "rejected": SHARED_START},   # identical_pair's business
    {"prompt": SHARED_START, "chosen": "Answer A.", "rejected": "Answer B."},   # the trainer drops the row
])
def test_other_checks_business_is_left_to_them(rec: dict, make_tok: Callable[..., DPOTokenizer]) -> None:
    assert found(TruncationIdentical, rec, make_tok(max_length=64)) == []


@pytest.mark.parametrize("mode,expect", [("keep_end", False), ("keep_start", True)])
def test_truncation_mode_decides_truncation_identical(tmp_path: Path, mode: str, expect: bool) -> None:
    rec = {"prompt": "Continue.", "chosen": SHARED_START + "Answer A.", "rejected": SHARED_START + "Answer B."}
    audit = scan_cheap(tmp_path, [rec], max_length=64, max_prompt_length=None, truncation_mode=mode)
    assert ("truncation_identical" in audit.findings["check"].to_list()) is expect
