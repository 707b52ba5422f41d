"""Exercise: a mixed-precision training step.

On the CPU compute in bfloat16 (no scaler needed); on CUDA compute in float16 with a GradScaler.
The model's parameters stay float32 throughout: autocast casts on the fly.
"""

import torch
from torch.nn import functional as F


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision dtype to compute in: float16 on CUDA, bfloat16 on the CPU."""
    # TODO: the dtype for `device` (not for this machine: the check asks about both devices).
    raise NotImplementedError("TODO: implement autocast_dtype")


def make_scaler(device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler for `device` that is enabled only when the autocast dtype is float16."""
    # TODO: a scaler for `device`, enabled exactly when loss scaling is needed. Watch out:
    #       torch.cuda.amp.GradScaler is deprecated; the check also asks for a CUDA scaler on CPU.
    raise NotImplementedError("TODO: implement make_scaler")


def train_step(model, optimizer, scaler, x, y, max_norm: float | None = None) -> float:
    """One training step on (x, y) with cross-entropy loss; returns the loss as a float. With
    `max_norm`, the gradients' total norm is clipped to `max_norm` before the step."""
    optimizer.zero_grad(set_to_none=True)
    # TODO: run this step in mixed precision, on either device. Watch out:
    #       - only the forward pass and the loss belong in low precision; backward and the
    #         optimizer step come after, and the parameters stay float32;
    #       - go through the `scaler` you are given: with float16 a step whose gradients
    #         overflowed must be skipped, and the scale adapted for the next step;
    #       - when max_norm is given, clip the gradients' total norm to it before the step:
    #         the norm of the gradients the loss really has, whatever the scaler did to them.
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    if max_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.item()
