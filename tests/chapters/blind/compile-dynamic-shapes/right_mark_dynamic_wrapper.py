"""RIGHT: keeps torch.compile's default (automatic) dynamic setting and instead marks both the batch and the sequence dimension of every input with torch._dynamo.mark_dynamic before calling the compiled model, and stores the counter as a float buffer."""

import torch
import torch._dynamo
import torch.nn as nn


class Mixer(nn.Module):
    """Causal attention over the sequence, with a softmax temperature that warms up from 0.9
    (first call) down to 0.5 over the first calls."""

    def __init__(self, dim: int = 24) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.register_buffer("calls", torch.tensor(0.0), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, seq, dim)
        self.calls.add_(1)
        temperature = torch.clamp(1.0 - 0.1 * self.calls, min=0.5)
        seq = x.shape[1]
        scores = self.q(x) @ self.k(x).transpose(1, 2) / (temperature * x.shape[-1] ** 0.5)
        future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        return self.out(scores.softmax(dim=-1) @ x)


class _MarkedDynamic(nn.Module):
    """Runs a compiled module with the batch and sequence dimensions of x marked symbolic."""

    def __init__(self, compiled: nn.Module) -> None:
        super().__init__()
        self.compiled = compiled

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(x, 1)
        return self.compiled(x)


def compile_model(model: nn.Module, backend="inductor"):
    """Compile `model` with `backend` so that new batch and sequence sizes reuse one graph."""
    return _MarkedDynamic(torch.compile(model, backend=backend))
