"""No module loads pickles (issue #9: a pickle another user could plant was executed). The one exception is
reading a trainer's ``training_args.bin``, which needs the explicit ``--trust-pickle`` flag."""

from __future__ import annotations

import re
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "pairaudit"
# modules that may unpickle, each behind a guard a test checks:
# - trace/settings.py reads training_args.bin with the real unpickler only with --trust-pickle;
# - trace/args_pickle.py is the restricted unpickler (find_class never hands out a callable; the malicious
#   pickles in tests/test_trace_args.py must not run);
# - trace/checkpoints.py reads the fp16 scaler state with torch.load(weights_only=True) (tensors and plain values).
ALLOWED: set[str] = {"trace/settings.py", "trace/args_pickle.py", "trace/checkpoints.py"}


def test_no_module_unpickles() -> None:
    pattern = re.compile(r"^\s*(import (c?pickle|dill|joblib)|from (c?pickle|dill|joblib) import)|torch\.load\(|"
                         r"allow_pickle\s*=\s*True", re.M)
    offenders = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
                       if pattern.search(p.read_text(encoding="utf-8")) and str(p.relative_to(PKG)) not in ALLOWED)
    assert offenders == []
