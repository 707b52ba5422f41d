"""RIGHT: applies tensor parallelism once on the whole model with a wildcard plan ("layers.*.fc1"/"layers.*.fc2") over mesh["tp"], then shards every block and the root over mesh["dp"] in a second loop."""

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
    tp_mesh, dp_mesh = mesh["tp"], mesh["dp"]
    parallelize_module(
        model,
        tp_mesh,
        {"layers.*.fc1": ColwiseParallel(), "layers.*.fc2": RowwiseParallel()},
    )
    for block in model.layers:
        fully_shard(block, mesh=dp_mesh)
    fully_shard(model, mesh=dp_mesh)
    return model
