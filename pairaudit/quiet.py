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


@contextmanager
def tqdm_off(module_name: str) -> Iterator[None]:
    """The progress bar of a library module that imported ``tqdm`` as a name of its own (which the libraries'
    progress-bar switches do not reach: transformers' GGUF conversion, model2vec's distillation) off for the
    duration; a module that is not there, or has no ``tqdm``, is left alone."""
    import functools
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ImportError:
        module = None
    bar = getattr(module, "tqdm", None)
    if bar is not None:
        module.tqdm = functools.partial(bar, disable=True)  # type: ignore[union-attr]
    try:
        yield
    finally:
        if bar is not None:
            module.tqdm = bar  # type: ignore[union-attr]
