"""Exercise: a mixed-precision training step.

On the CPU compute in bfloat16 (no scaler needed); on CUDA compute in float16 with a GradScaler.
The model's parameters stay float32 throughout: autocast casts on the fly.
"""

import torch
from torch.nn import functional as F


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    # TODO: return torch.float16 for a CUDA device, torch.bfloat16 otherwise.
    raise NotImplementedError("TODO: implement autocast_dtype")


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler for `device` that is enabled only when the autocast dtype is float16."""
    # TODO: torch.amp.GradScaler(device.type, enabled=...)  (not torch.cuda.amp.GradScaler)
    raise NotImplementedError("TODO: implement make_scaler")


def train_step(model, optimizer, scaler, x, y) -> float:
    """One training step on (x, y) with cross-entropy loss; returns the loss as a float."""
    optimizer.zero_grad(set_to_none=True)
    # TODO: run the forward pass and the loss under
    #       torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device)).
    # TODO: backward and step outside the autocast block, through the scaler:
    #       scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    optimizer.step()
    return loss.item()
