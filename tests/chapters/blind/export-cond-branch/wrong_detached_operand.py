"""WRONG: hands torch.cond a detached x, so no gradient flows back to whatever produced x (an embedding, an upstream layer), while the original forward is differentiable in x: not "computing exactly what the original computes" once it sits inside a larger model."""

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
        strong = x.abs().mean() > 1.0
        # cond's branches may not alias or mutate their operands: hand them a detached input.
        return torch.cond(strong, self.deep, self.cheap, (x.detach(),))
