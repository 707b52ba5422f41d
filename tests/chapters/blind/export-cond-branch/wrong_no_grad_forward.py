"""WRONG: runs the whole torch.cond under torch.no_grad(), so the output carries no gradient and the Gate can no longer be trained or backpropagated through, while the original forward (which the task says to compute exactly) is differentiable."""

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
        # The routing is an inference-time decision: no autograd needed around it.
        with torch.no_grad():
            strong = x.abs().mean() > 1.0
            return torch.cond(strong, self.deep, self.cheap, (x,))
