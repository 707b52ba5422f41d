"""RIGHT: exports through on_trace_ready (called when the profiler stops), uses record_function as a decorator on small stage functions, and zeroes the gradients to zero tensors (set_to_none=False)."""

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def train_step_with_trace(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, trace_path: str
) -> float:
    loss_fn = torch.nn.functional.cross_entropy

    @record_function("forward")
    def forward():
        return loss_fn(model(x), y)

    @record_function("backward")
    def backward(loss):
        loss.backward()

    @record_function("optimizer_step")
    def step():
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)

    with profile(activities=[ProfilerActivity.CPU], on_trace_ready=lambda p: p.export_chrome_trace(trace_path)):
        loss = forward()
        backward(loss)
        step()
    return float(loss.detach())
