"""WRONG: returns the mean loss as a Python float via .item(), while the stub asks to "Return the mean of the micro-batch losses as a tensor without autograd graph"."""

import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

LR = 0.05


class Net(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x)))


def make_ddp(model: nn.Module) -> DDP:
    """Wrap `model` (on the CPU, every rank holding the same weights) for data parallelism."""
    return DDP(model)


def train_step(
    model: DDP, optimizer: torch.optim.Optimizer, micro_batches: list[tuple[torch.Tensor, torch.Tensor]]
) -> torch.Tensor:
    """One optimizer step over this rank's micro-batches; returns their mean loss, detached."""
    n = len(micro_batches)
    total = 0.0
    for i, (x, y) in enumerate(micro_batches):
        ctx = model.no_sync() if i < n - 1 else contextlib.nullcontext()
        with ctx:
            loss = F.mse_loss(model(x), y)
            (loss / n).backward()
        total += loss.item()
    optimizer.step()
    optimizer.zero_grad()
    return total / n
