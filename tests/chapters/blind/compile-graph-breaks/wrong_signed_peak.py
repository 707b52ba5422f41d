"""WRONG: divides by the largest value h.amax() instead of the largest magnitude h.abs().amax(), which differs (and can even flip the sign of everything) whenever the most extreme feature is negative (guide: "normalise the hidden features by their largest magnitude")."""

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
        h = h / h.amax()
        h = torch.where(h.mean() > 0, torch.relu(h), torch.tanh(h))
        return self.fc2(h)
