"""RIGHT: builds the 8-bit optimizer as bnb.optim.Adam(..., optim_bits=8), which is the same optimizer Adam8bit is, and counts bytes with Tensor.nbytes in one generator expression."""

import bitsandbytes as bnb
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam for `model`'s parameters, learning rate `lr`, with 8-bit optimizer state."""
    return bnb.optim.Adam(model.parameters(), lr=lr, optim_bits=8)


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    return int(sum(v.nbytes for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v)))
