"""Before a scan: the model paths exist and the requested device is there; OpenMP threads that wait politely."""

from __future__ import annotations

import ctypes
import os
import sys
from typing import TYPE_CHECKING

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


def give_back_freed_memory() -> None:
    """Return the heap's freed pages to the OS (glibc's ``malloc_trim``), between two whole-dataset stages: a
    stage frees hundreds of MB that glibc otherwise keeps in the process for the next stage and the writers to
    stack on (the transformer pass over 2,800 HH texts left +700 MB resident, +300 MB after a trim; at 1M rows the
    write phase peaked at 2,980 MB without it). Nothing happens without glibc (macOS, Windows, musl).

    Example:
        >>> give_back_freed_memory()  # never fails; returns nothing
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return
    trim(0)


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
