"""Exercise: 8-bit Adam from bitsandbytes, and measuring optimizer state.

Plain Adam keeps two float32 tensors per parameter (exp_avg and exp_avg_sq): 8 bytes per weight,
twice the model itself. bitsandbytes' 8-bit Adam stores them quantized to one byte each.
"""

import bitsandbytes as bnb  # noqa: F401  (you will need it)
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam for `model`'s parameters, learning rate `lr`, with 8-bit optimizer state."""
    # TODO: Adam with 8-bit state, from bitsandbytes, for every parameter of `model`. Watch out:
    #       the check reads the learning rate, betas and weight decay back from the optimizer.
    return torch.optim.Adam(model.parameters(), lr=lr)


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    # TODO: the bytes of every tensor in optimizer.state, which maps each parameter to a dict
    #       of its state. Watch out: the dicts may also hold plain numbers (a step count), and
    #       8-bit state comes with float32 helpers (per-block scales) that count too.
    raise NotImplementedError("TODO: implement state_bytes")
