"""WRONG: calls model.train() before the step and leaves the caller's model in training mode; the task is "one training step" of the model as given, not a change of its mode (a model the caller froze in eval mode, e.g. for BatchNorm statistics, comes back changed)."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def train_step_with_trace(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, trace_path: str
) -> float:
    loss_fn = torch.nn.functional.cross_entropy
    model.train()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("forward"):
            loss = loss_fn(model(x), y)
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer_step"):
            optimizer.step()
            optimizer.zero_grad()
    prof.export_chrome_trace(trace_path)
    return loss.item()
