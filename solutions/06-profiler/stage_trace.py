"""Reference solution: label the stages of a training step with record_function and export a trace."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def train_step_with_trace(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                          x: torch.Tensor, y: torch.Tensor, trace_path: str) -> float:
    loss_fn = torch.nn.functional.cross_entropy
    # The trace exists only once the profiler has stopped: export after the block.
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("forward"):  # key
            loss = loss_fn(model(x), y)
        with record_function("backward"):  # key
            loss.backward()
        with record_function("optimizer_step"):  # key
            optimizer.step()
            optimizer.zero_grad()
    prof.export_chrome_trace(trace_path)  # key
    return loss.item()
