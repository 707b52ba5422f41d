"""Reference solution: 8-bit Adam from bitsandbytes, and measuring optimizer state."""

import bitsandbytes as bnb
import torch


def make_optimizer(model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """Adam whose two moment buffers are stored in 8 bits (blockwise quantized)."""
    # Tensors with fewer than min_8bit_size (4096) elements, such as biases, keep 32-bit state.
    return bnb.optim.Adam8bit(model.parameters(), lr=lr)  # key


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held by every tensor in the optimizer's per-parameter state."""
    return sum(v.numel() * v.element_size()  # key
               for state in optimizer.state.values()
               for v in state.values() if isinstance(v, torch.Tensor))
