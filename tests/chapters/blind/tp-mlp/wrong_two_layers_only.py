"""WRONG: spells the plan out for layers.0 and layers.1 only, so a third block stays unsharded, against "shards **every** block over the 1-D mesh" (the check draws 2 or 3 layers)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


class FeedForward(nn.Module):
    """The MLP of a Llama-style block: w2(silu(w1(x)) * w3(x))."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w3 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MLPStack(nn.Module):
    """Several feed-forward blocks with residual connections."""

    def __init__(self, dim: int, hidden: int, n_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(FeedForward(dim, hidden) for _ in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = x + layer(x)
        return x


def parallelize_mlp(model: MLPStack, mesh: DeviceMesh) -> MLPStack:
    """Shard every block over `mesh`: w1 and w3 by output features, w2 by input features."""
    plan = {}
    for i in range(2):
        plan[f"layers.{i}.w1"] = ColwiseParallel()
        plan[f"layers.{i}.w3"] = ColwiseParallel()
        plan[f"layers.{i}.w2"] = RowwiseParallel()
    return parallelize_module(model, mesh, plan)
