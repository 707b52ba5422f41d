"""RIGHT: clips the still-scaled gradients to max_norm times the scaler's current scale (1.0 when disabled), which after scaler.step's own division is a true-scale clip to max_norm; NaN gradients stay NaN, so the step is still skipped."""

import torch
from torch.nn import functional as F


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    return torch.float16 if device.type == "cuda" else torch.bfloat16


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler that is only enabled when float16 gradients could underflow."""
    return torch.amp.GradScaler(device.type, enabled=autocast_dtype(device) == torch.float16)


def train_step(model, optimizer, scaler, x, y, max_norm: float | None = None) -> float:
    """One step: forward and loss under autocast, backward and step outside it; with `max_norm`,
    the gradients' total norm at their true scale is clipped to it before the step."""
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device)):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    scaler.scale(loss).backward()
    if max_norm is not None:
        threshold = max_norm * scaler.get_scale() if scaler.is_enabled() else max_norm
        torch.nn.utils.clip_grad_norm_(model.parameters(), threshold)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
