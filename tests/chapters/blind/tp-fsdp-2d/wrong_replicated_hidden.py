"""WRONG: lets fc1 all-gather its output (output_layouts=Replicate()) and fc2 re-slice a replicated input, so placements and numbers match but every block does an extra all-gather in forward, against the guide's "choose the splits so that an MLP needs only one collective in its forward pass"."""

import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.distributed.tensor import Replicate

LR = 0.05


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, dim: int, hidden: int, n_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(dim, hidden) for _ in range(n_layers))
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def parallelize_2d(model: Net, mesh: DeviceMesh) -> Net:
    """Tensor parallel over mesh["tp"] inside every block, then FSDP over mesh["dp"]."""
    plan = {
        "fc1": ColwiseParallel(output_layouts=Replicate()),
        "fc2": RowwiseParallel(input_layouts=Replicate()),
    }
    for block in model.layers:
        parallelize_module(block, mesh["tp"], plan)
        fully_shard(block, mesh=mesh["dp"])
    fully_shard(model, mesh=mesh["dp"])
    return model
