"""WRONG: keeps the .item() and hides its break by setting torch._dynamo.config.capture_scalar_outputs = True at import, a process-wide compiler flag that changes how every other compiled program in the process is traced (stub: "rewrite them so that everything stays in tensors")."""

import torch
import torch._dynamo
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
        peak = h.abs().max().item()
        h = h / peak
        return self.fc2(torch.where(h.mean() > 0, torch.relu(h), torch.tanh(h)))


torch._dynamo.config.capture_scalar_outputs = True
