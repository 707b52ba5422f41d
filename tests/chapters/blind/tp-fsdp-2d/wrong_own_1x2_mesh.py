"""WRONG: ignores the `mesh` argument and builds a fixed 1 x world ("dp", "tp") mesh, which matches the check's 1 x 2 draw only; on the 2 x 1 mesh it runs tensor parallelism of degree 2 where FSDP over both ranks was asked ("the code is the same for every shape")."""

import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

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
    grid = init_device_mesh("cpu", (1, dist.get_world_size()), mesh_dim_names=("dp", "tp"))
    for block in model.layers:
        parallelize_module(block, grid["tp"], {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
        fully_shard(block, mesh=grid["dp"])
    fully_shard(model, mesh=grid["dp"])
    return model
