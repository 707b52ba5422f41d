"""Exercise: find the op that takes the most self CPU time in a model's forward pass.

"Self" time is the time an op spends in its own code, not in the ops it calls: `aten::linear`
has a large *total* time only because it calls `aten::addmm`, which does the work.
"""

import torch
from torch.profiler import ProfilerActivity, profile  # noqa: F401  (you will want them)


def find_bottleneck(model: torch.nn.Module, x: torch.Tensor, iters: int = 10) -> tuple[str, float]:
    """Profile `iters` forward passes of `model(x)` and return `(op_name, share)`.

    op_name: the key of the op with the most self CPU time, e.g. "aten::addmm".
    share:   that op's self CPU time divided by the self CPU time of all ops together,
             a fraction between 0 and 1 (the table's "Self CPU %" column divided by 100).
    """
    # TODO: run a few forward passes first (warm-up), under torch.no_grad()
    # TODO: profile `iters` forward passes with profile(activities=[ProfilerActivity.CPU])
    # TODO: from prof.key_averages(), take the event with the largest self_cpu_time_total
    #       and divide it by the sum of self_cpu_time_total over all events
    raise NotImplementedError("TODO: profile the model and return (op name, share)")
