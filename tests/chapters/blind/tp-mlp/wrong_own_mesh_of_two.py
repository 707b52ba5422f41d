"""WRONG: ignores the `mesh` argument and builds its own 2-rank CPU mesh, so it only works when the job has exactly 2 processes, although it must shard "over the 1-D `mesh`" it is given."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.distributed.device_mesh import init_device_mesh


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
    tp_mesh = init_device_mesh("cpu", (2,))
    plan = {
        "layers.*.w1": ColwiseParallel(),
        "layers.*.w3": ColwiseParallel(),
        "layers.*.w2": RowwiseParallel(),
    }
    return parallelize_module(model, tp_mesh, plan)
