"""WRONG: takes the last micro-batch with micro_batches.pop(), emptying part of the caller's list, although train_step only receives "this rank's part of the global batch" to read, not to consume."""

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
    x_last, y_last = micro_batches.pop()
    total = torch.zeros(())
    with model.no_sync():
        for x, y in micro_batches:
            loss = F.mse_loss(model(x), y)
            (loss / n).backward()
            total += loss.detach()
    loss = F.mse_loss(model(x_last), y_last)
    (loss / n).backward()
    total += loss.detach()
    optimizer.step()
    optimizer.zero_grad()
    return total / n
