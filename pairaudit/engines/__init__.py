"""Execution engines, chosen by name (``--engine``). An engine runs the streaming part of a scan
(batches through the engine-neutral ``BatchProcessor`` and the stages' ``observe``) and hands the
results to the :class:`~pairaudit.pipeline.Scanner`, which finalizes stages and writes outputs.

``local`` (default) runs every batch in this process (``engines.local.run_local``); ``ray`` runs the same
code in Ray actors spread over a cluster and also finalizes the stages and writes the outputs there,
setting ``Scanner.written`` (``engines.ray_engine``). Engines are imported only when chosen.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from pairaudit.errors import ConfigError

if TYPE_CHECKING:
    from pairaudit.pipeline import Engine

ENGINES: dict[str, str] = {
    "local": "pairaudit.engines.local:run_local",
    "ray": "pairaudit.engines.ray_engine:run_ray",
}


def get_engine(name: str) -> Engine:
    """The engine callable registered under ``name``."""
    if name not in ENGINES:
        raise ConfigError(f"--engine {name!r} is not known", expected=" or ".join(ENGINES))
    module, _, attr = ENGINES[name].partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[return-value]
