"""WRONG: w1/w3 gather their output (output_layouts=Replicate()) and w2 re-slices a replicated input, so the placements and numbers are right but every block pays two extra all-gathers, against the stub's "with one all-reduce per block ... the slice one layer leaves on a rank is the slice the next layer needs"."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.distributed.tensor import Replicate


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
    plan = {
        "layers.*.w1": ColwiseParallel(output_layouts=Replicate()),
        "layers.*.w3": ColwiseParallel(output_layouts=Replicate()),
        "layers.*.w2": RowwiseParallel(input_layouts=Replicate()),
    }
    return parallelize_module(model, mesh, plan)
