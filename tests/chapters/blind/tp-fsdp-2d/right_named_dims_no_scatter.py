"""RIGHT: looks the sub-mesh names up from mesh.mesh_dim_names, parallelizes each block's fc1/fc2 separately with src_data_rank=None (every rank starts from the same weights, so no scatter), and passes reshard_after_forward explicitly."""

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
    names = mesh.mesh_dim_names
    tp_mesh = mesh[names[names.index("tp")]]
    dp_mesh = mesh[names[names.index("dp")]]
    for block in model.layers:
        parallelize_module(block.fc1, tp_mesh, ColwiseParallel(), src_data_rank=None)
        parallelize_module(block.fc2, tp_mesh, RowwiseParallel(), src_data_rank=None)
    for block in model.layers:
        fully_shard(block, mesh=dp_mesh, reshard_after_forward=True)
    fully_shard(model, mesh=dp_mesh, reshard_after_forward=False)
    return model
