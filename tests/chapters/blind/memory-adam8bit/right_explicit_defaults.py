"""RIGHT: passes Adam's defaults explicitly (betas, eps, weight_decay=0.0) to Adam8bit over a list of the parameters, and counts with nested loops using nelement() * itemsize."""

import bitsandbytes as bnb
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam for `model`'s parameters, learning rate `lr`, with 8-bit optimizer state."""
    params = list(model.parameters())
    return bnb.optim.Adam8bit(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    nbytes = 0
    for per_param in optimizer.state.values():
        for name, value in per_param.items():
            if not isinstance(value, torch.Tensor):
                continue  # step counters and other plain numbers
            nbytes += value.nelement() * value.itemsize
    return nbytes
