"""Before a scan: the model paths exist and the requested device is there; OpenMP threads that wait politely; the
C heap's freed pages handed back between large operations (``trim``)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from typing import TYPE_CHECKING, Any

from pairaudit.errors import ConfigError
from pairaudit.models.loading import check_model_arg

if TYPE_CHECKING:
    from pairaudit.config import ScanConfig


def passive_openmp() -> None:
    """``OMP_WAIT_POLICY=PASSIVE`` unless the user set it, before torch loads OpenMP: idle OpenMP threads sleep
    instead of spinning. With the default (spinning) policy, torch's threads on a machine where another
    process holds a core wait on each other at every barrier: the transformer embedded 4 texts/s with 2
    threads against 41-57 with one thread, and 51 with 2 passive threads (2 cores, one busy with another job).
    No effect once torch is imported (e.g. in a notebook that loaded it first)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def trim() -> bool:
    """Hand the C heap's free pages back to the system (glibc ``malloc_trim(0)``): after a large operation the
    allocator keeps what it freed, so the next one starts from the last one's peak (a Ray actor's reduce
    operations; the local engine's whole-dataset stages: the transformer pass over 2,800 HH texts left +700 MB
    resident, +300 MB after a trim, and at 1M rows the write phase peaked at 2,980 MB without it, 1,993 MB with it);
    False where there is no glibc.

    Returns:
        True where ``malloc_trim`` ran.

    Example:
        >>> isinstance(trim(), bool)
        True
    """
    fn = _malloc_trim()
    if fn is None:
        return False
    fn(0)
    return True


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once (``find_library`` runs ``ldconfig``); None where there is none."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        fn = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn


def check_runtime(cfg: ScanConfig) -> None:
    """Before a scan: model paths exist and the device is there (not a failure at the end of the scan)."""
    passive_openmp()
    for option, value in (("--tokenizer", cfg.tokenizer), ("--embedder", cfg.embedder), ("--reference", cfg.reference),
                          ("--reward-model", cfg.reward_model), ("--policy", cfg.policy)):
        check_model_arg(value, option)
    if cfg.device not in ("auto", "cpu", "mps") and not cfg.device.startswith("cuda"):
        raise ConfigError(f"--device {cfg.device!r}", expected="auto, cpu, cuda, cuda:N or mps")
    if cfg.device.startswith("cuda"):
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            import torch

            if not torch.cuda.is_available():
                raise ConfigError(f"--device {cfg.device} was requested but CUDA is not available to torch",
                                  fix="use --device cpu (or auto), or install a CUDA build of torch")
