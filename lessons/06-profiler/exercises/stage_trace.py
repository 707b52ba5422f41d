"""Exercise: label the stages of a training step with record_function and export a trace.

The trace opens in https://ui.perfetto.dev (or chrome://tracing): you will see three coloured
ranges, "forward", "backward" and "optimizer_step", with the ops of each stage nested inside.
"""

import torch
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: F401


def train_step_with_trace(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                          x: torch.Tensor, y: torch.Tensor, trace_path: str) -> float:
    """One training step (cross-entropy loss) under the profiler; returns the loss as a float.

    Stages, each inside `record_function` with exactly these names:
      "forward":        logits = model(x) and the loss
      "backward":       loss.backward()
      "optimizer_step": optimizer.step() and optimizer.zero_grad()
    Then write a Chrome trace of the whole step to `trace_path`.
    """
    loss_fn = torch.nn.functional.cross_entropy
    # TODO: one CPU profile around the whole step, with each of the three stages under a label
    #       of exactly its name (the labels one after another, not nested).
    # TODO: watch out: the trace only exists once the profiler has stopped.
    raise NotImplementedError("TODO: profile a labelled training step and export the trace")
