"""Loading a causal LM (HF folder, hub id or GGUF file) for scoring; GGUF weights are dequantized once
and cached as safetensors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pairaudit.cache import cache_write
from pairaudit.errors import ModelError, require
from pairaudit.models.device import torch_dtype
from pairaudit.models.loading import ModelSpec, hub_error


def _dequantized_dir(cache_dir: Path | None, spec: ModelSpec) -> Path | None:
    if cache_dir is None or not spec.gguf_file or not spec.sha256:
        return None
    return Path(cache_dir) / "reference" / "models" / spec.sha256[:32]


def load_causal_lm(spec: ModelSpec, *, cache_dir: Path | None = None, device: str = "cpu",
                   precision: str = "fp32", trust_remote_code: bool = False,
                   log: Callable[[str], None] | None = None, option: str = "--reference") -> Any:
    """Load a causal LM (HF folder, hub id or GGUF file) in eval mode on ``device``/``precision``.

    A GGUF file is dequantized by transformers (tens of seconds for 135M parameters); the
    dequantized weights are saved once under ``cache_dir/reference/models/<sha>`` and reloaded
    from there (well under a second). ``option``: the command-line option that named it (errors name it).
    """
    require("torch", "models", "reference-model scoring")
    from transformers import AutoModelForCausalLM

    dtype = torch_dtype(precision)
    saved = _dequantized_dir(cache_dir, spec)
    try:
        if saved is not None and (saved / "config.json").exists():
            model = AutoModelForCausalLM.from_pretrained(str(saved), dtype=dtype)
        else:
            kwargs = spec.from_pretrained_kwargs()
            if not spec.gguf_file:
                kwargs["trust_remote_code"] = trust_remote_code
            if log and spec.gguf_file:
                log(f"dequantizing GGUF {spec.display} (once; cached under {saved})")
            from contextlib import nullcontext

            from pairaudit.quiet import tqdm_off

            # transformers' "Converting and de-quantizing GGUF tensors" bar is a tqdm of its own
            with tqdm_off("transformers.modeling_gguf_pytorch_utils") if spec.gguf_file else nullcontext():
                model = AutoModelForCausalLM.from_pretrained(spec.path, **kwargs)
            if saved is not None:
                _save_dequantized(model, saved)
            model = model.to(dtype)
    except Exception as exc:
        if isinstance(exc, ModelError):
            raise
        raise hub_error(spec, "model", exc, option) from exc
    model.eval()
    return model.to(device)


def _save_dequantized(model: Any, saved: Path) -> None:
    """Save a GGUF-loaded (already dequantized, fp32) model as safetensors (:func:`pairaudit.cache.cache_write`:
    skipped when the cache cannot be written)."""
    model.hf_quantizer = None  # weights are plain tensors; the gguf marker only blocks saving
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    try:
        cache_write(saved.parent, lambda tmp: model.save_pretrained(str(tmp)), name=saved.name,
                    what="the dequantized GGUF weights")
    except Exception:  # noqa: BLE001 - a library's refusal to save: the weights are loaded, the cache is a speed-up
        pass
