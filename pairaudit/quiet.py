"""Third-party output switched off while pairaudit works: the progress bars of datasets ("Saving the
dataset", "Generating train split"), transformers ("Loading weights") and huggingface_hub, and with
``errors_only`` their warnings too (``pairaudit scan -q``). Previous settings are restored on exit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def quiet_libraries(errors_only: bool = False) -> Iterator[None]:
    """Turn off the progress bars of datasets, transformers and huggingface_hub (and, with
    ``errors_only``, their warnings) for the duration; the previous settings are restored."""
    undo: list[Callable[[], Any]] = []
    try:
        import datasets.utils.logging as dlog

        if dlog.is_progress_bar_enabled():
            dlog.disable_progress_bar()
            undo.append(dlog.enable_progress_bar)
        if errors_only:
            level = dlog.get_verbosity()
            dlog.set_verbosity_error()
            undo.append(lambda: dlog.set_verbosity(level))
    except ImportError:  # pragma: no cover - datasets is a base dependency
        pass
    try:
        import transformers.utils.logging as tlog

        if tlog.is_progress_bar_enabled():
            tlog.disable_progress_bar()
            undo.append(tlog.enable_progress_bar)
        if errors_only:
            tlevel = tlog.get_verbosity()
            tlog.set_verbosity_error()
            undo.append(lambda: tlog.set_verbosity(tlevel))
    except ImportError:  # pragma: no cover - transformers is a base dependency
        pass
    try:
        import huggingface_hub.utils as hub

        if not hub.are_progress_bars_disabled():
            hub.disable_progress_bars()
            undo.append(hub.enable_progress_bars)
    except ImportError:  # pragma: no cover
        pass
    try:
        yield
    finally:
        for fn in reversed(undo):
            fn()
