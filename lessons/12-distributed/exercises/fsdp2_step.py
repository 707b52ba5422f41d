"""Exercise: shard a small network with FSDP2 (fully_shard) and train it one step at a time.

Each rank builds the same Net, shards it, and trains on ITS OWN part of every batch. Done
right, the sharded model ends each step with exactly the parameters that a single process
gets by training the unsharded model on the whole batch.

Run it yourself with two CPU processes:
    torchrun --standalone --nproc-per-node=2 fsdp2_step.py
"""

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
    # TODO: shard the model over `mesh` so that each block is its own unit (gathered one at a
    #       time) and the rest of the model is covered too; return an SGD optimizer with lr=LR
    #       that really updates the sharded model.
    # Watch out: the order of the calls matters, and so does what sharding does to the
    #       parameter objects that an optimizer holds on to.
    raise NotImplementedError("TODO: implement setup_fsdp")


def train_step(model: Net, optimizer: torch.optim.Optimizer, inputs: torch.Tensor,
               targets: torch.Tensor) -> torch.Tensor:
    """One step on this rank's part of the batch; returns the (local) loss."""
    # TODO: one ordinary training step (mean-squared error of model(inputs) against targets),
    #       leaving no gradients behind for the next step; return the loss as a tensor that
    #       holds no autograd graph.
    # Watch out: each rank sees only its part of the batch, yet the update must equal one
    #       process training on the whole batch. What does FSDP already do with the gradients?
    raise NotImplementedError("TODO: implement train_step")


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 fsdp2_step.py
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = Net(in_features=8, dim=32, n_layers=2, out_features=4)
    optimizer = setup_fsdp(model, mesh)
    local = sum(p.to_local().numel() for p in model.parameters())
    total = sum(p.numel() for p in model.parameters())
    print(f"rank {rank}: holds {local} of {total} parameters")
    for step in range(3):
        x = torch.randn(16, 8)                    # the global batch (same seed everywhere) ...
        y = x[:, :4].sin()
        mine = slice(rank * 16 // world, (rank + 1) * 16 // world)   # ... and this rank's part
        loss = train_step(model, optimizer, x[mine], y[mine])
        print(f"rank {rank} step {step}: loss {loss.item():.4f}")
    dist.destroy_process_group()
