"""RIGHT: stores the temperature itself as a non-persistent buffer that is lowered by 0.1 per call and clamped at 0.5, and compiles the model in place with model.compile(dynamic=True), returning the model, instead of wrapping it with torch.compile."""

import torch
import torch.nn as nn


class Mixer(nn.Module):
    """Causal attention over the sequence, with a softmax temperature that warms up from 0.9
    (first call) down to 0.5 over the first calls."""

    def __init__(self, dim: int = 24) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.register_buffer("temperature", torch.tensor(1.0), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, seq, dim)
        self.temperature.copy_((self.temperature - 0.1).clamp(min=0.5))
        seq = x.shape[1]
        scores = self.q(x) @ self.k(x).transpose(1, 2) / (self.temperature * x.shape[-1] ** 0.5)
        future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        return self.out(scores.softmax(dim=-1) @ x)


def compile_model(model: nn.Module, backend="inductor"):
    """Compile `model` with `backend` so that new batch and sequence sizes reuse one graph."""
    model.compile(backend=backend, dynamic=True)
    return model
