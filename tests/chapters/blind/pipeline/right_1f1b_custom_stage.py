"""RIGHT: a small custom stage module that keeps the model's own blocks in a ModuleList (and the head, or None), bounds computed as i*L//world, and the 1F1B schedule with an nn.MSELoss module."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe
from torch.distributed.pipelining import Schedule1F1B


class Block(nn.Module):
    """Residual tanh MLP block."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.tanh(self.fc(x))


class Net(nn.Module):
    def __init__(self, dim: int, n_layers: int, out_features: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(dim) for _ in range(n_layers))
        self.head = nn.Linear(dim, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class _Stage(nn.Module):
    def __init__(self, blocks, head) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.head = head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x if self.head is None else self.head(x)


def build_pipeline(model: Net, rank: int, world: int, n_microbatches: int):
    """This rank's stage of `model` (its own layers, not copies) and a schedule that trains it
    with the MSE loss on `n_microbatches` micro-batches. Returns (stage_module, schedule)."""
    n = len(model.layers)
    lo, hi = rank * n // world, (rank + 1) * n // world
    last = rank == world - 1
    stage_module = _Stage([model.layers[i] for i in range(lo, hi)], model.head if last else None)
    stage = PipelineStage(stage_module, rank, world, torch.device("cpu"))
    schedule = Schedule1F1B(stage, n_microbatches, loss_fn=nn.MSELoss())
    return stage_module, schedule
