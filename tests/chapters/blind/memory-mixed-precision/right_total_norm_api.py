"""RIGHT: always unscales before reading gradients, then clips with torch.nn.utils.get_total_norm and clip_grads_with_norm_ (the two halves of clip_grad_norm_); scaler.step does not divide again."""

import torch
from torch.nn import functional as F


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    return {"cuda": torch.float16}.get(torch.device(device).type, torch.bfloat16)


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
    scaler.unscale_(optimizer)
    if max_norm is not None:
        params = [p for p in model.parameters() if p.grad is not None]
        total = torch.nn.utils.get_total_norm([p.grad for p in params])
        torch.nn.utils.clip_grads_with_norm_(params, max_norm, total)
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
