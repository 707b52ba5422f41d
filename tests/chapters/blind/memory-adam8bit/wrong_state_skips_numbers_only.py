"""WRONG: skips only ints and floats and treats every other state value as a tensor, so an optimizer whose state holds lists (torch.optim.LBFGS: old_dirs, al, ...) makes it crash, breaking "for any optimizer" (anything that is not a tensor must be skipped)."""

import bitsandbytes as bnb
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam for `model`'s parameters, learning rate `lr`, with 8-bit optimizer state."""
    return bnb.optim.Adam8bit(model.parameters(), lr=lr)


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    total = 0
    for state in optimizer.state.values():
        for value in state.values():
            if isinstance(value, (int, float)):
                continue  # the step count
            total += value.numel() * value.element_size()
    return total
