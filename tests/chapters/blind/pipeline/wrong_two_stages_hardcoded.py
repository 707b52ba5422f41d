"""WRONG: splits the blocks into a first and a second half by `rank == 0`, which is only right for exactly two processes, while the task says "cut the model into `world` consecutive stages" (with one process the head is lost, with four the middle ranks get the last half and the head)."""

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
    half = len(model.layers) // 2
    if rank == 0:
        stage_module = nn.Sequential(*model.layers[:half])
    else:
        stage_module = nn.Sequential(*model.layers[half:], model.head)
    stage = PipelineStage(stage_module, stage_index=rank, num_stages=world, device=torch.device("cpu"))
    schedule = ScheduleGPipe(stage, n_microbatches=n_microbatches, loss_fn=F.mse_loss)
    return stage_module, schedule
