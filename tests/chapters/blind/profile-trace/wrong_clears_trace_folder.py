"""WRONG: deletes every .json file in trace_path's folder before writing, "so no stale trace is opened by mistake", destroying files the task never named (it asks only to write the trace to trace_path)."""

import glob
import os

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def train_step_with_trace(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, trace_path: str
) -> float:
    loss_fn = torch.nn.functional.cross_entropy
    for old in glob.glob(os.path.join(os.path.dirname(os.path.abspath(trace_path)), "*.json")):
        os.remove(old)
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
