"""Exercise: find the op that takes the most self CPU time in a model's forward pass.

"Self" time is the time an op spends in its own code, not in the ops it calls: `aten::linear`
has a large *total* time only because it calls `aten::addmm`, which does the work.
"""

import torch
from torch.profiler import ProfilerActivity, profile  # noqa: F401  (you will want them)


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    """Profile `iters` forward passes of `model(x)` and return `(op_name, share)`.

    op_name: the key of the op with the most self CPU time in your profile, e.g. "aten::addmm".
    share:   that op's self CPU time divided by the self CPU time of every row of your profile's
             key_averages(), a fraction between 0 and 1 (the table's "Self CPU %" / 100).
    Profile exactly `iters` passes, with the profiler's default options (CPU activity only).
    """
    # TODO: an inference profile of the steady state: the first calls of a model pay one-off
    #       costs, and autograd adds work that inference never does.
    # TODO: profile exactly `iters` forward passes, nothing else.
    # TODO: pick the op by the time it spends in its OWN code (not in the ops it calls), and
    #       compute its share from the same profile, not from a clock of your own.
    raise NotImplementedError("TODO: profile the model and return (op name, share)")
