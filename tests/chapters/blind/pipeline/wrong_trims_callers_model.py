"""WRONG: turns the caller's Net itself into the stage by cutting its layers list and replacing its head with nn.Identity on the first stages, so the caller's model is destroyed, although the stage is to be built "from the model's own layers" as a module of its own."""

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
    model.layers = nn.ModuleList(model.layers[rank * per_stage : (rank + 1) * per_stage])
    if rank != world - 1:
        model.head = nn.Identity()
    stage = PipelineStage(model, stage_index=rank, num_stages=world, device=torch.device("cpu"))
    schedule = ScheduleGPipe(stage, n_microbatches=n_microbatches, loss_fn=F.mse_loss)
    return model, schedule
