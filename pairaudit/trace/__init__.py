"""``pairaudit trace``: from a training run that went non-finite to the source rows of its failing steps.

Modules by concern:

- :mod:`~pairaudit.trace.settings`: the trainer settings that decide the data order, from flags, a
  JSON/TOML file and the run's files (``trainer_state.json``, the callback's ``meta.json``,
  ``training_args.json``, ``training_args.bin`` via :mod:`~pairaudit.trace.args_pickle`, which runs no code);
- :mod:`~pairaudit.trace.history`: ``log_history`` analysis (first non-finite / jumping value, logging windows);
- :mod:`~pairaudit.trace.rows`: which source rows the trainer keeps, in its dataset index order (TRL's filters);
- :mod:`~pairaudit.trace.order`: optimizer step -> trainer dataset indices, as transformers + accelerate do it;
- :mod:`~pairaudit.trace.record`: the recording callback's on-disk format (no pickle);
- :mod:`~pairaudit.trace.explain`: findings, token lengths and policy DPO logits of the rows of a window;
- :mod:`~pairaudit.trace.verify`: whether the reconstructed rows can be trusted (else status "unreliable");
- :mod:`~pairaudit.trace.diagnose`: why the run died (data, learning rate, precision, amplifier, broken
  weights) and the fixes in order;
- :mod:`~pairaudit.trace.render`: terminal view and ``trace.json``;
- :mod:`~pairaudit.trace.run`: the ``trace`` entry point tying them together.

Nothing heavy is imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["trace", "TraceResult"]

if TYPE_CHECKING:
    from pairaudit.trace.run import TraceResult, trace


def __getattr__(name: str) -> Any:
    if name in __all__:
        from pairaudit.trace import run

        return getattr(run, name)
    raise AttributeError(name)
