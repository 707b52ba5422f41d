"""WRONG: builds the stage from deep copies of the blocks and head, although the stage must be made "from the model's **own** layers (not copies)": the gradients land on the copies and the caller's model never trains."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe
import copy


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
    blocks = [copy.deepcopy(b) for b in model.layers[rank * per_stage : (rank + 1) * per_stage]]
    if rank == world - 1:
        blocks.append(copy.deepcopy(model.head))
    stage_module = nn.Sequential(*blocks)
    stage = PipelineStage(stage_module, stage_index=rank, num_stages=world, device=torch.device("cpu"))
    schedule = ScheduleGPipe(stage, n_microbatches=n_microbatches, loss_fn=F.mse_loss)
    return stage_module, schedule
