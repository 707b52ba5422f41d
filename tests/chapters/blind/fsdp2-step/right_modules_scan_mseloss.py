"""RIGHT: finds the blocks by scanning model.modules() for Block instances, passes the mesh and reshard_after_forward explicitly, and trains with an nn.MSELoss module and zero_grad(set_to_none=True)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard

LR = 0.05


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


def setup_fsdp(model: Net, mesh: DeviceMesh) -> torch.optim.Optimizer:
    """Shard `model` in place (each block, then the root) and return its optimizer."""
    blocks = [m for m in model.modules() if isinstance(m, Block)]
    for block in blocks:
        fully_shard(block, mesh=mesh, reshard_after_forward=True)
    fully_shard(model, mesh=mesh)
    params = [p for p in model.parameters()]
    return torch.optim.SGD(params, lr=LR)


def train_step(
    model: Net, optimizer: torch.optim.Optimizer, inputs: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """One step on this rank's part of the batch; returns the (local) loss."""
    criterion = nn.MSELoss()
    output = model(inputs)
    loss = criterion(output, targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    with torch.no_grad():
        value = loss.clone()
    return value
