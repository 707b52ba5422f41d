"""RIGHT: marks only the batch dimension dynamic (before each call) and leaves the sequence length to automatic dynamic, so the first new sequence length costs one recompile: 2 graphs for the 8 calls, which the guide allows in so many words ("at most two graphs (the first compile plus at most one recompile)"; "more than two fails"). Moved from wrong_: the stub's "the first call already handles ... sequence sizes" is a hint, the guide states the bar."""

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
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, seq, dim)
        self.calls += 1
        temperature = (1.0 - 0.1 * self.calls).clamp(min=0.5)
        seq = x.shape[1]
        scores = self.q(x) @ self.k(x).transpose(1, 2) / (temperature * x.shape[-1] ** 0.5)
        future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        return self.out(scores.softmax(dim=-1) @ x)


def compile_model(model: nn.Module, backend="inductor"):
    """Compile `model` with `backend` so that new batch and sequence sizes reuse one graph."""
    compiled = torch.compile(model, backend=backend)

    def run(x: torch.Tensor) -> torch.Tensor:
        torch._dynamo.mark_dynamic(x, 0)  # the batch size is what varies
        return compiled(x)

    return run
