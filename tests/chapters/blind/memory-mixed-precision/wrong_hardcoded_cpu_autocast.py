"""WRONG: hard-codes torch.autocast("cpu", dtype=torch.bfloat16), so on a CUDA batch the Linears run in float32 (CPU autocast does not touch CUDA ops) and the float16 scaler guards nothing, breaking "make one training step work in mixed precision on either device"."""

import torch
from torch.nn import functional as F


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    return torch.float16 if device.type == "cuda" else torch.bfloat16


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler for `device` that is enabled only when the autocast dtype is float16."""
    return torch.amp.GradScaler(device.type, enabled=autocast_dtype(device) == torch.float16)


def train_step(model, optimizer, scaler, x, y) -> float:
    """One training step on (x, y) with cross-entropy loss; returns the loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
