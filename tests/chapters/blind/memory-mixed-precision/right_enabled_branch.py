"""RIGHT: a dict maps device type to dtype, torch.amp.autocast is used, and train_step branches on scaler.is_enabled(): scaled backward + scaler.step/update when enabled, a plain backward/step when it is disabled (which is what a disabled scaler does anyway)."""

import torch
from torch.nn import functional as F


_LOW_PRECISION = {"cuda": torch.float16}


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    return _LOW_PRECISION.get(device.type, torch.bfloat16)


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler for `device` that is enabled only when the autocast dtype is float16."""
    needs_scaling = autocast_dtype(device) is torch.float16
    return torch.amp.GradScaler(device=device.type, enabled=needs_scaling)


def train_step(model, optimizer, scaler, x, y) -> float:
    """One training step on (x, y) with cross-entropy loss; returns the loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(x.device.type, dtype=autocast_dtype(x.device)):
        loss = F.cross_entropy(model(x), y)
    if scaler.is_enabled():
        scaler.scale(loss).backward()
        scaler.step(optimizer)   # skipped when a gradient is inf/NaN
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return float(loss.detach())
