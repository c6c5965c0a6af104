"""pairaudit: audit and clean preference datasets before DPO / RLHF training.

    >>> import pairaudit
    >>> audit = pairaudit.scan("pairs.jsonl", out="audit-out")   # doctest: +SKIP
    >>> audit.findings, audit.report["totals"], audit.clean      # doctest: +SKIP
    >>> audit = pairaudit.open("audit-out")                      # doctest: +SKIP  (a folder read back)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pairaudit.versions import __version__

# ``open`` (pairaudit.open(DIR): an output folder as an Audit) is left out of ``__all__`` on purpose: a
# star import would shadow the builtin
__all__ = ["scan", "apply_decisions", "Audit", "ScanConfig", "__version__"]

if TYPE_CHECKING:
    from pairaudit.api import apply_decisions, scan
    from pairaudit.api import open_folder as open  # noqa: F401
    from pairaudit.config import ScanConfig
    from pairaudit.pipeline import Audit

# lazy: keep `import pairaudit` and `pairaudit --help` fast
# name -> "module" (the same name there) or "module:name"
_LAZY = {"scan": "pairaudit.api", "apply_decisions": "pairaudit.api", "open": "pairaudit.api:open_folder",
         "Audit": "pairaudit.pipeline", "ScanConfig": "pairaudit.config", "load_pairs": "pairaudit.outputs.reader"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, _, attr = _LAZY[name].partition(":")
        return getattr(importlib.import_module(module), attr or name)
    raise AttributeError(name)
