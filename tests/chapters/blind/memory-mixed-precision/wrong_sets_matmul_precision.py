"""WRONG: sets torch.set_float32_matmul_precision("medium") at import for extra speed, which lets every float32 matmul in the process (outside autocast too) run at reduced precision, a global left changed where mixed precision means "operations that need range or precision stay float32"."""

import torch
from torch.nn import functional as F


# Mixed precision everywhere: let float32 matmuls use the fast reduced-precision paths too.
torch.set_float32_matmul_precision("medium")


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    return torch.float16 if device.type == "cuda" else torch.bfloat16


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler for `device` that is enabled only when the autocast dtype is float16."""
    return torch.amp.GradScaler(device.type, enabled=autocast_dtype(device) == torch.float16)


def train_step(model, optimizer, scaler, x, y) -> float:
    """One training step on (x, y) with cross-entropy loss; returns the loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device)):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
