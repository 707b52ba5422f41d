"""Reference solution: a mixed-precision training step (bf16 on CPU, fp16 + GradScaler on CUDA)."""

import torch
from torch.nn import functional as F


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    return torch.float16 if device.type == "cuda" else torch.bfloat16  # key


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler that is only enabled when float16 gradients could underflow."""
    return torch.amp.GradScaler(device.type, enabled=autocast_dtype(device) == torch.float16)  # key


def train_step(model, optimizer, scaler, x, y, max_norm: float | None = None) -> float:
    """One step: forward and loss under autocast, backward and step outside it; with `max_norm`,
    the gradients' total norm at their true scale is clipped to it before the step."""
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=x.device.type, dtype=autocast_dtype(x.device)):  # key
        logits = model(x)                  # Linear layers run in fp16/bf16
        loss = F.cross_entropy(logits, y)  # autocast runs the loss in float32
    scaler.scale(loss).backward()          # key: a disabled scaler returns loss unchanged
    if max_norm is not None:
        scaler.unscale_(optimizer)         # key: .grad holds loss * scale until this divides it out
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # reads the true-scale .grad
    scaler.step(optimizer)                 # key: unscales (unless done above); skips the step if a gradient is inf/NaN
    scaler.update()                        # adapts the scale for the next step
    return loss.item()
