"""pairaudit: audit and clean preference datasets before DPO / RLHF training.

    >>> import pairaudit
    >>> audit = pairaudit.scan("pairs.jsonl", out="audit-out")   # doctest: +SKIP
    >>> audit.findings, audit.report["totals"], audit.clean      # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["scan", "apply_decisions", "Audit", "ScanConfig", "__version__"]

if TYPE_CHECKING:
    from pairaudit.config import ScanConfig
    from pairaudit.pipeline import Audit, apply_decisions, scan


def __getattr__(name: str) -> Any:  # lazy: keep `import pairaudit` and `pairaudit --help` fast
    if name in ("scan", "apply_decisions", "Audit", "load_pairs"):
        from pairaudit import pipeline

        return getattr(pipeline, name)
    if name == "ScanConfig":
        from pairaudit.config import ScanConfig

        return ScanConfig
    raise AttributeError(name)
