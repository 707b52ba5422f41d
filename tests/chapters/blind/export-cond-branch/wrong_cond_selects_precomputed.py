"""WRONG: runs both paths before the torch.cond and only selects a result inside it, so a weak input still pays for the deep path, against "Only the chosen path should run (no computing both and selecting)"; the graph does contain a cond node."""

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
        # Branches must be pure functions of their operands, so feed them both results.
        deep_out = self.deep(x)
        cheap_out = self.cheap(x)
        return torch.cond(strong, lambda d, c: d.clone(), lambda d, c: c.clone(), (deep_out, cheap_out))
