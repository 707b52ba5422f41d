"""WRONG: divides by the peak clamped to at least 1.0 "to avoid amplifying small activations", which changes the function whenever the largest magnitude is below 1 (guide: it must compute "the same function: normalise the hidden features by their largest magnitude")."""

import torch
import torch.nn as nn


class Router(nn.Module):
    """Normalises hidden features by their largest magnitude, then picks an activation by the
    sign of their mean: relu when the mean is positive, tanh otherwise."""

    def __init__(self, dim: int = 32, hidden: int = 64) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        peak = h.abs().amax().clamp(min=1.0)
        h = h / peak
        h = torch.where(h.mean() > 0, torch.relu(h), torch.tanh(h))
        return self.fc2(h)
