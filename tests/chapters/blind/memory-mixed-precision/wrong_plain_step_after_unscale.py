"""WRONG: with max_norm, unscales, clips, then calls optimizer.step() directly (the gradients are already unscaled, so the scaler seems done), so a clipped step with NaN gradients is not skipped; breaks the stub's 'go through the scaler you are given: ... a step whose gradients overflowed must be skipped'."""

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
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()  # gradients are already unscaled: step them as they are
    else:
        scaler.step(optimizer)
    scaler.update()
    return loss.item()
