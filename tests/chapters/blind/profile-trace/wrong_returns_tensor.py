"""WRONG: returns the loss tensor (still attached to the graph) instead of "the loss as a float"; it compares equal to a float in arithmetic, so a tolerance check alone lets it through."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def train_step_with_trace(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, trace_path: str
) -> float:
    loss_fn = torch.nn.functional.cross_entropy
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("forward"):
            loss = loss_fn(model(x), y)
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer_step"):
            optimizer.step()
            optimizer.zero_grad()
    prof.export_chrome_trace(trace_path)
    return loss
