"""WRONG: state_bytes returns MiB (bytes / 2**20, the unit the check reports in) instead of "the number of bytes held by all tensors", so it is off by a factor of 1048576 while every ratio computed from it still looks right."""

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
            if torch.is_tensor(value):
                total += value.numel() * value.element_size()
    return total / 2**20
