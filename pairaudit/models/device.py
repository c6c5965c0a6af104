"""Device and precision choice for the model-based stages (torch imported inside functions)."""

from __future__ import annotations

from typing import Any

from pairaudit.config import PRECISIONS
from pairaudit.errors import ConfigError


def cpu_supports_bf16() -> bool:
    """True when oneDNN has native bf16 kernels (AVX-512 BF16 / AMX). Without them PyTorch emulates
    bf16 and a forward pass is several times *slower* than fp32 (measured here: AVX2-only CPU)."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # noqa: BLE001 - private op, absent on some builds
        return False


def pick_device(device: str = "auto") -> str:
    import torch

    if device in (None, "", "auto"):
        if torch.cuda.is_available():
            return "cuda"
        return "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {device} was requested but CUDA is not available",
                          fix="use --device cpu (or auto), or install a CUDA build of torch")
    return device


def resolved_if_known(device: str) -> str:
    """``device`` with ``auto`` resolved to ``cuda`` or ``cpu`` where torch is imported in this process already
    (asking costs nothing then), else as given: a pool worker handed the resolved device does not import torch
    (~1 s a process) only to find that there is no GPU.

    Args:
        device: a ``--device`` value.

    Returns:
        ``cuda`` / ``cpu`` for ``auto`` once torch is imported here, else ``device``.

    Example:
        >>> resolved_if_known("cpu")
        'cpu'
    """
    import sys

    if device not in (None, "", "auto") or "torch" not in sys.modules:
        return device
    return pick_device("auto")


def pick_precision(precision: str, device: str) -> str:
    """``auto``: bf16 on CUDA with bf16 support (else fp32), bf16 on CPUs with native bf16 kernels,
    else fp32. fp16 is only used when asked for (summed log-probs lose precision in half types)."""
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r}", expected=" | ".join(PRECISIONS))
    if precision != "auto":
        return precision
    import torch

    if device.startswith("cuda"):
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    if device == "cpu":
        return "bf16" if cpu_supports_bf16() else "fp32"
    return "fp32"


def torch_dtype(precision: str) -> Any:
    import torch

    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
