"""RIGHT: starts and stops the profiler explicitly, takes the float of the loss inside the forward range, and writes the trace via a pathlib.Path."""

from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def train_step_with_trace(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, trace_path: str
) -> float:
    loss_fn = torch.nn.functional.cross_entropy
    prof = profile(activities=[ProfilerActivity.CPU])
    prof.start()
    try:
        with record_function("forward"):
            logits = model(x)
            loss = loss_fn(logits, y)
            value = loss.item()
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer_step"):
            optimizer.step()
            optimizer.zero_grad()
    finally:
        prof.stop()
    prof.export_chrome_trace(str(Path(trace_path)))
    return value
