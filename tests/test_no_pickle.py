"""No module loads pickles (issue #9: a pickle another user could plant was executed). The one exception is
reading a trainer's ``training_args.bin``, which needs the explicit ``--trust-pickle`` flag."""

from __future__ import annotations

import re
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "pairaudit"
# modules that may unpickle, each behind an explicit opt-in flag: trace reads training_args.bin only
# with --trust-pickle (tests/test_trace*.py check it is not read without it)
ALLOWED: set[str] = {"trace/settings.py"}


def test_no_module_unpickles() -> None:
    pattern = re.compile(r"^\s*(import (c?pickle|dill|joblib)|from (c?pickle|dill|joblib) import)|torch\.load\(|"
                         r"allow_pickle\s*=\s*True", re.M)
    offenders = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
                       if pattern.search(p.read_text(encoding="utf-8")) and str(p.relative_to(PKG)) not in ALLOWED)
    assert offenders == []
