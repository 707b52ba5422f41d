"""RIGHT: accepts a device given as a string too, takes the autocast device from the model's parameters, and calls scaler.unscale_(optimizer) explicitly before scaler.step (which then does not unscale twice)."""

import torch
from torch.nn import functional as F


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    kind = torch.device(device).type
    if kind == "cuda":
        return torch.float16
    return torch.bfloat16


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler for `device` that is enabled only when the autocast dtype is float16."""
    kind = torch.device(device).type
    return torch.amp.GradScaler(kind, enabled=(autocast_dtype(kind) == torch.float16))


def train_step(model, optimizer, scaler, x, y) -> float:
    """One training step on (x, y) with cross-entropy loss; returns the loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    device = next(model.parameters()).device
    with torch.autocast(device_type=device.type, dtype=autocast_dtype(device)):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)   # true-scale gradients in .grad from here on
    scaler.step(optimizer)
    scaler.update()
    return loss.detach().float().item()
