"""RIGHT: calls parallelize_module once per block with relative names and spells out the default input/output layouts, imported from the public torch.distributed.tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from torch.distributed.tensor import Replicate, Shard


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
    for layer in model.layers:
        parallelize_module(
            layer,
            mesh,
            {
                "w1": ColwiseParallel(input_layouts=Replicate(), output_layouts=Shard(-1)),
                "w3": ColwiseParallel(input_layouts=Replicate(), output_layouts=Shard(-1)),
                "w2": RowwiseParallel(input_layouts=Shard(-1), output_layouts=Replicate()),
            },
        )
    return model
