"""WRONG: walks optimizer.param_groups and reads optimizer.state[p] for every parameter; optimizer.state is a defaultdict, so the measurement inserts empty state entries for parameters that have none (before the first step, or frozen ones), changing the optimizer it only had to measure."""

import bitsandbytes as bnb
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam for `model`'s parameters, learning rate `lr`, with 8-bit optimizer state."""
    return bnb.optim.Adam8bit(model.parameters(), lr=lr)


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    total = 0
    for group in optimizer.param_groups:
        for p in group["params"]:
            for value in optimizer.state[p].values():
                if isinstance(value, torch.Tensor):
                    total += value.numel() * value.element_size()
    return total
