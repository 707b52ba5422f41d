"""WRONG: runs every forward (the last micro-batch's too) inside no_sync() and only the last backward outside, but the guide says "the whole forward-and-backward of the synchronising micro-batch belongs outside the context", so DDP never prepares the reduction and the ranks are not averaged."""

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
    with model.no_sync():
        losses = [F.mse_loss(model(x), y) for x, y in micro_batches]
        for loss in losses[:-1]:
            (loss / n).backward()
    (losses[-1] / n).backward()
    optimizer.step()
    optimizer.zero_grad()
    return torch.stack([loss.detach() for loss in losses]).mean()
