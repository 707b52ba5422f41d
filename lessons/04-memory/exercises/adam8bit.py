"""Exercise: 8-bit Adam from bitsandbytes, and measuring optimizer state.

Plain Adam keeps two float32 tensors per parameter (exp_avg and exp_avg_sq): 8 bytes per weight,
twice the model itself. bitsandbytes' 8-bit Adam stores them quantized to one byte each.
"""

import bitsandbytes as bnb  # noqa: F401  (you will need it)
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam for `model`'s parameters, learning rate `lr`, with 8-bit optimizer state."""
    # TODO: return the bitsandbytes 8-bit Adam (bnb.optim.Adam8bit) with learning rate `lr`.
    return torch.optim.Adam(model.parameters(), lr=lr)


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    # TODO: optimizer.state maps each parameter to a dict of its state (tensors, and maybe plain
    #       numbers such as a step count). Add up numel() * element_size() of every tensor in it.
    raise NotImplementedError("TODO: implement state_bytes")
