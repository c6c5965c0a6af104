"""Non-finite values during training: per sequence in a model's output, and in the gradients before the
optimizer step (torch is imported inside the functions)."""

from __future__ import annotations

from typing import Any


def nonfinite_sequences(output: Any) -> tuple[int, list[int]] | None:
    """(batch size, indices of sequences with a non-finite value) of a model output, or None if all finite."""
    import torch

    tensors = []
    for name in ("logits", "log_probs"):
        t = getattr(output, name, None)
        if t is None and isinstance(output, dict):
            t = output.get(name)
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dim() >= 2:
            tensors.append(t.detach())
    if not tensors and isinstance(output, (tuple, list)) and output and isinstance(output[0], torch.Tensor):
        tensors.append(output[0].detach())
    bad: set[int] = set()
    size = 0
    for t in tensors:
        size = t.shape[0]
        if bool(torch.isfinite(t).all()):
            continue
        per_seq = ~torch.isfinite(t.reshape(t.shape[0], -1)).all(dim=1)
        bad.update(int(i) for i in torch.nonzero(per_seq).flatten().tolist())
    return (size, sorted(bad)) if bad else None


def nonfinite_gradients(model: Any) -> str | None:
    """"N of M parameter gradients non-finite", or None when every gradient is finite (or there is none)."""
    import torch

    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if not grads:
        return None
    try:  # one fused kernel (what clip_grad_norm_ uses); per tensor where it is unavailable
        norms = torch.stack([n.float() for n in torch._foreach_norm(grads)])
    except (AttributeError, RuntimeError):
        norms = torch.stack([g.detach().float().norm() for g in grads])
    finite = torch.isfinite(norms)
    if bool(finite.all()):
        return None
    return f"{int((~finite).sum())} of {len(grads)} parameter gradients non-finite"
