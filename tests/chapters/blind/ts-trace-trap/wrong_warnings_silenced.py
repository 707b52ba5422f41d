"""WRONG: trace_gate silences warnings process-wide (warnings.simplefilter("ignore")) and leaves that filter installed, although the guide says "Run the file to see the TracerWarning": the trap's only signal is hidden from the caller for good."""

import warnings

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
    warnings.simplefilter("ignore")  # the deprecation and tracer warnings are noise here
    return torch.jit.trace(model, example)


def trap_gap(model: nn.Module, traced: torch.jit.ScriptModule, other: torch.Tensor) -> float:
    """How wrong the trace is on `other`: the largest absolute difference."""
    with torch.no_grad():
        return (traced(other) - model(other)).abs().max().item()


def fix_gate(model: nn.Module) -> torch.jit.ScriptModule:
    """A TorchScript version of `model` that is right for inputs on both branches."""
    return torch.jit.script(model)


if __name__ == "__main__":
    model = Gate()
    positive = torch.randn(4, 16) + 1.0
    negative = torch.randn(4, 16) - 1.0
    traced = trace_gate(model, positive)
    print(traced.code)
    print("traced, other branch, max error:", trap_gap(model, traced, negative))
    fixed = fix_gate(model)
    print("fixed, other branch, max error:", trap_gap(model, fixed, negative))
