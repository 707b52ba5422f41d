"""RIGHT: fix_gate traces a branch-free torch.where rewrite (per-batch mean, as Gate decides) that shares the caller's Linear, and trap_gap measures under inference_mode with float(); the guide names the where-rewrite as a valid fix."""

import torch
from torch import nn


class Gate(nn.Module):
    """Given: do not edit. Routes each batch on the sign of the input's mean."""

    def __init__(self, dim: int = 16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        if x.mean() > 0:
            return torch.relu(h)
        return -h


def trace_gate(model: nn.Module, example: torch.Tensor) -> torch.jit.ScriptModule:
    """Trace `model` with `example` (this step reproduces the trap: do not fix it here)."""
    return torch.jit.trace(model, example)


def trap_gap(model: nn.Module, traced: torch.jit.ScriptModule, other: torch.Tensor) -> float:
    """How wrong the trace is on `other`: the largest absolute difference."""
    with torch.inference_mode():
        return float(torch.max(torch.abs(traced(other) - model(other))))


class _GateWhere(nn.Module):
    """Gate without a Python branch: both sides computed, one selected for the whole batch."""

    def __init__(self, proj: nn.Linear):
        super().__init__()
        self.proj = proj

    def forward(self, x):
        h = self.proj(x)
        return torch.where(x.mean() > 0, torch.relu(h), -h)


def fix_gate(model: nn.Module) -> torch.jit.ScriptModule:
    """A TorchScript version of `model` that is right for inputs on both branches."""
    p = next(model.parameters())
    example = torch.randn(3, model.proj.in_features, dtype=p.dtype, device=p.device)
    return torch.jit.trace(_GateWhere(model.proj), example)


if __name__ == "__main__":
    model = Gate()
    positive = torch.randn(4, 16) + 1.0
    negative = torch.randn(4, 16) - 1.0
    traced = trace_gate(model, positive)
    print(traced.code)
    print("traced, other branch, max error:", trap_gap(model, traced, negative))
    fixed = fix_gate(model)
    print("fixed, other branch, max error:", trap_gap(model, fixed, negative))
