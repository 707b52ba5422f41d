"""RIGHT: fix_gate traces a wrapper whose branch lives in a @torch.jit.script_if_tracing function, so the data-dependent if is compiled inside the trace; trap_gap uses torch.no_grad as a decorator and torch.amax."""

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


@torch.no_grad()
def trap_gap(model: nn.Module, traced: torch.jit.ScriptModule, other: torch.Tensor) -> float:
    """How wrong the trace is on `other`: the largest absolute difference."""
    return torch.amax((traced(other) - model(other)).abs()).item()


@torch.jit.script_if_tracing
def _route(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    if bool(x.mean() > 0):
        return torch.relu(h)
    return -h


class _ScriptedBranchGate(nn.Module):
    def __init__(self, proj: nn.Linear):
        super().__init__()
        self.proj = proj

    def forward(self, x):
        return _route(x, self.proj(x))


def fix_gate(model: nn.Module) -> torch.jit.ScriptModule:
    """A TorchScript version of `model` that is right for inputs on both branches."""
    example = torch.randn(2, model.proj.in_features)
    return torch.jit.trace(_ScriptedBranchGate(model.proj), example)


if __name__ == "__main__":
    model = Gate()
    positive = torch.randn(4, 16) + 1.0
    negative = torch.randn(4, 16) - 1.0
    traced = trace_gate(model, positive)
    print(traced.code)
    print("traced, other branch, max error:", trap_gap(model, traced, negative))
    fixed = fix_gate(model)
    print("fixed, other branch, max error:", trap_gap(model, fixed, negative))
