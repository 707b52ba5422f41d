"""WRONG: divides each micro-batch loss by n_microbatches and turns off scale_grads, so the gradients are right but the reported micro-batch losses are n times too small, against "whose loss is the mean-squared error of each micro-batch"."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe


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


def build_pipeline(model: Net, rank: int, world: int, n_microbatches: int):
    """This rank's stage of `model` (its own layers, not copies) and a schedule that trains it
    with the MSE loss on `n_microbatches` micro-batches. Returns (stage_module, schedule)."""
    per_stage = len(model.layers) // world
    blocks = list(model.layers[rank * per_stage : (rank + 1) * per_stage])
    if rank == world - 1:
        blocks.append(model.head)
    stage_module = nn.Sequential(*blocks)
    stage = PipelineStage(stage_module, stage_index=rank, num_stages=world, device=torch.device("cpu"))

    def loss_fn(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(output, target) / n_microbatches  # average over the micro-batches here

    schedule = ScheduleGPipe(stage, n_microbatches=n_microbatches, loss_fn=loss_fn, scale_grads=False)
    return stage_module, schedule
