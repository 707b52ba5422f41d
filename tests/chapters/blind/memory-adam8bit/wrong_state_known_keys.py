"""WRONG: sums only the state keys of Adam and bitsandbytes (exp_avg, exp_avg_sq, state1/2, absmax1/2, qmap1/2), so SGD's momentum_buffer, RMSprop's square_avg or Adam's step tensor are not counted, breaking "the number of bytes held by all tensors ... for any optimizer"."""

import bitsandbytes as bnb
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam for `model`'s parameters, learning rate `lr`, with 8-bit optimizer state."""
    return bnb.optim.Adam8bit(model.parameters(), lr=lr)


_STATE_KEYS = ("exp_avg", "exp_avg_sq", "state1", "state2", "absmax1", "absmax2", "qmap1", "qmap2")


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    total = 0
    for state in optimizer.state.values():
        for key in _STATE_KEYS:
            if key in state:
                total += state[key].numel() * state[key].element_size()
    return total
