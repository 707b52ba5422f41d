"""Reference solution: a data-dependent branch that torch.export can capture, with torch.cond."""

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
        strong = x.abs().mean() > 1.0  # a 0-d bool tensor: no Python bool needed
        # Both branches take the same operands and return tensors of the same shape and dtype;
        # only the one the predicate picks runs.
        return torch.cond(strong, self.deep, self.cheap, (x,))  # key
