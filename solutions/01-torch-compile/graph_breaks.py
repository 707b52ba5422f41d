"""Reference solution: the same computation as the original Router, as one graph."""

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
        # Keep the peak as a 0-d tensor: no .item(), so no trip back to Python.
        h = h / h.abs().amax()  # key
        # The print is gone: logging belongs outside the compiled region.
        # Both activations are cheap, so compute both and select with a tensor condition.
        h = torch.where(h.mean() > 0, torch.relu(h), torch.tanh(h))  # key
        return self.fc2(h)
