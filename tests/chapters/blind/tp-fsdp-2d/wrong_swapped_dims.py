"""WRONG: uses the mesh dimensions the other way round (tensor parallel over mesh["dp"], FSDP over mesh["tp"]), against "fc1 column-wise and fc2 row-wise tensor parallel over mesh["tp"]; then ... fully_shard over mesh["dp"]"."""

import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

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
    dp_mesh, tp_mesh = mesh["tp"], mesh["dp"]
    for block in model.layers:
        parallelize_module(block, tp_mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
        fully_shard(block, mesh=dp_mesh)
    fully_shard(model, mesh=dp_mesh)
    return model
