"""pairaudit: audit and clean preference datasets before DPO / RLHF training.

    >>> import pairaudit
    >>> audit = pairaudit.scan("pairs.jsonl", out="audit-out")   # doctest: +SKIP
    >>> audit.findings, audit.report["totals"], audit.clean      # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pairaudit.versions import __version__

__all__ = ["scan", "apply_decisions", "Audit", "ScanConfig", "__version__"]

if TYPE_CHECKING:
    from pairaudit.api import apply_decisions, scan
    from pairaudit.config import ScanConfig
    from pairaudit.pipeline import Audit

# lazy: keep `import pairaudit` and `pairaudit --help` fast
_LAZY = {"scan": "pairaudit.api", "apply_decisions": "pairaudit.api", "Audit": "pairaudit.pipeline",
         "ScanConfig": "pairaudit.config", "load_pairs": "pairaudit.io.pairs"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
