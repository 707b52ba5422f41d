"""Exercise: the tracing trap, and its fix.

torch.jit.trace runs the model once on an example input and records the tensor operations
that ran. Python control flow is not an operation: `if x.mean() > 0` is evaluated once,
during the trace, and only the branch it chose is recorded. The traced module then takes
that branch for every input, silently.

Run this file (python trace_trap.py) to see the TracerWarning that tracing prints.
"""

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
    # TODO: record ONE run of the model on `example` (the recording entry point of TorchScript).
    raise NotImplementedError("TODO: trace the model")


def trap_gap(model: nn.Module, traced: torch.jit.ScriptModule, other: torch.Tensor) -> float:
    """How wrong the trace is on `other`, an input that takes the branch the trace did not
    record: the largest absolute difference between traced(other) and model(other)."""
    # TODO: the worst error over all entries, as a plain Python number (not a tensor), and
    #       without building an autograd graph you do not need.
    raise NotImplementedError("TODO: measure the traced module's error")


def fix_gate(model: nn.Module) -> torch.jit.ScriptModule:
    """A TorchScript version of `model` that is right for inputs on both branches."""
    # TODO: a TorchScript version that keeps the data-dependent `if` (no second recording:
    #       any recording takes one branch).
    raise NotImplementedError("TODO: fix it")


if __name__ == "__main__":
    model = Gate()
    positive = torch.randn(4, 16) + 1.0   # mean > 0: the relu branch
    negative = torch.randn(4, 16) - 1.0   # mean < 0: the -h branch
    traced = trace_gate(model, positive)  # watch for the TracerWarning
    print(traced.code)                    # only one branch was recorded
    print("traced, other branch, max error:", trap_gap(model, traced, negative))
    fixed = fix_gate(model)
    print("fixed, other branch, max error:", trap_gap(model, fixed, negative))
