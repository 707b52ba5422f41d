"""WRONG: makes each Linear inside the blocks its own unit instead of the block, so the blocks are not FSDP units and their LayerNorm falls to the root, against "shard every block and then the root with fully_shard"."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, in_features: int, dim: int, n_layers: int, out_features: int) -> None:
        super().__init__()
        self.inp = nn.Linear(in_features, dim)
        self.layers = nn.ModuleList(Block(dim) for _ in range(n_layers))
        self.head = nn.Linear(dim, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def shard_bf16(model: Net, mesh: DeviceMesh) -> None:
    """Shard `model` in place so that forward and backward compute in bfloat16, the sharded
    parameters (what the optimizer updates) stay float32, and gradients are reduced in float32."""
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.layers:
        fully_shard(layer.fc1, mesh=mesh, mp_policy=policy)
        fully_shard(layer.fc2, mesh=mesh, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
