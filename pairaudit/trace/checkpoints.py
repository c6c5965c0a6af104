"""The run's ``checkpoint-N`` folders: their step, whether their weights are finite (read with safetensors)
and their fp16 loss scale (``scaler.pt``, read with ``torch.load(weights_only=True)``): nothing is unpickled."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


def checkpoint_step(p: Path) -> int:
    """N of a ``checkpoint-N`` folder; -1 when the name has no step."""
    try:
        return int(p.name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


def checkpoints_health(run_dir: Path, reference: str | None = None, first: int | None = None) -> list[dict[str, Any]]:
    """Per ``checkpoint-N``: whether its weights are finite (safetensors) and its fp16 loss scale (scaler.pt).

    Non-finite values the starting model (``reference``, when it is a local folder) already had in the same
    tensor are not counted: they are the model's, not the run's."""
    base: dict[str, int] = {}
    if reference is not None and Path(reference).is_dir() and sorted(Path(reference).glob("*.safetensors")):
        base = _nonfinite_counts(sorted(Path(reference).glob("*.safetensors")))
    out = []
    for p in sorted(run_dir.glob("checkpoint-*"), key=checkpoint_step):
        step = checkpoint_step(p)
        if step >= 0 and p.is_dir():
            item: dict[str, Any] = {"step": step, "path": str(p)}
            scale = _scaler_scale(p / "scaler.pt")
            if scale is not None:
                item["loss_scale"] = scale
            out.append(item)

    def check(item: dict[str, Any]) -> bool:
        files = sorted(Path(item["path"]).glob("*.safetensors"))
        if not files:
            return True
        counts = _nonfinite_counts(files)
        bad = sorted(k for k, n in counts.items() if n > base.get(k, 0))
        item.update(weights_finite=not bad, nonfinite_tensors=bad[:5], n_nonfinite=len(bad), n_tensors=len(counts))
        return not bad

    # read only what the diagnosis needs (checkpoints of a large model are big): the first checkpoint after
    # the failure, and from the last one before it back to the last one with finite weights
    before = [k for k in out if first is None or k["step"] <= first]
    after = [k for k in out if first is not None and k["step"] > first]
    if after:
        check(after[0])
    for item in reversed(before):
        if check(item):
            break
    return out


def _nonfinite_counts(files: list[Path]) -> dict[str, int]:
    """Tensor name -> number of non-finite values (read with safetensors: no pickle)."""
    import torch
    from safetensors import safe_open

    out: dict[str, int] = {}
    for f in files:
        with safe_open(str(f), framework="pt") as fh:
            for name in fh.keys():  # safe_open has keys(), no iteration
                t = fh.get_tensor(name)
                out[name] = int((~torch.isfinite(t)).sum()) if t.is_floating_point() else 0
    return out


def _scaler_scale(path: Path) -> float | None:
    if not path.is_file():
        return None
    try:
        import torch

        state = torch.load(str(path), weights_only=True, map_location="cpu")  # plain numbers: nothing unpickled
    except Exception:  # noqa: BLE001 - a scaler file that is not plain data is ignored, not trusted
        return None
    scale = state.get("scale") if isinstance(state, dict) else None
    if hasattr(scale, "item"):
        scale = scale.item()
    finite = isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale)
    return float(scale) if finite else None
