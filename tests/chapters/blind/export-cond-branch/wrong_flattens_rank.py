"""WRONG: flattens x to 2-D before the cond and returns the flattened result, so a (batch, seq, dim) or 1-D input comes back in another shape, against "computing exactly what the original computes" (nn.Linear paths accept any leading dimensions)."""

import torch
import torch.nn as nn


class Gate(nn.Module):
    """Sends a batch through a deep path when its signal is strong (mean |x| > 1), and through a
    cheap path otherwise. The decision is made for the whole batch."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.cheap = nn.Linear(dim, dim)
        self.deep = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # torch.cond wants fixed-rank operands: route a (batch, dim) matrix.
        flat = x.reshape(-1, x.shape[-1])
        strong = flat.abs().mean() > 1.0
        return torch.cond(strong, self.deep, self.cheap, (flat,))
