"""WRONG: calls optimizer.zero_grad() after the "optimizer_step" range has closed, so that label holds only optimizer.step(), while the table says "optimizer_step" covers "optimizer.step() and optimizer.zero_grad()"."""

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
    return loss.item()
