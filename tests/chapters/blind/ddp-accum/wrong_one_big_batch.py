"""WRONG: concatenates the micro-batches into one forward/backward instead of accumulating their gradients ("Accumulate the gradients of all of them"), so the numbers and the single all-reduce come out right while the activation memory of the whole part, which accumulation exists to avoid, is spent anyway."""

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
    xs = torch.cat([x for x, _ in micro_batches])
    ys = torch.cat([y for _, y in micro_batches])
    out = model(xs)
    loss = F.mse_loss(out, ys)  # equal micro-batch sizes: the mean of the means
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    sizes = [len(x) for x, _ in micro_batches]
    parts = [F.mse_loss(o, y) for o, (_, y) in zip(out.detach().split(sizes), micro_batches)]
    return torch.stack(parts).mean()
