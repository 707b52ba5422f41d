"""RIGHT: splits the block indices with torch.arange(...).tensor_split(world), builds an nn.Sequential of the model's own modules, and passes a lambda around F.mse_loss to GPipe with explicit scale_grads=True."""

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
    mine = torch.arange(len(model.layers)).tensor_split(world)[rank].tolist()
    modules = [model.layers[i] for i in mine]
    if rank == world - 1:
        modules.append(model.head)
    stage_module = nn.Sequential(*modules)
    stage = PipelineStage(stage_module, stage_index=rank, num_stages=world, device="cpu")
    schedule = ScheduleGPipe(
        stage,
        n_microbatches=n_microbatches,
        loss_fn=lambda out, target: F.mse_loss(out, target, reduction="mean"),
        scale_grads=True,
    )
    return stage_module, schedule
