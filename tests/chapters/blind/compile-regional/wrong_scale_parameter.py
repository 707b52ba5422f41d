"""WRONG: turns the per-block scale into an nn.Parameter, which makes it trainable: it gets a gradient and any optimizer over model.parameters() changes it, so the blocks no longer compute a fixed 1/sqrt(2 * (layer_idx + 1)) residual scale (task: change how Block keeps its per-block data, "not what it computes")."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """A pre-norm MLP block whose residual branch is scaled by 1/sqrt(2 * (layer_idx + 1)),
    so deeper blocks add smaller updates."""

    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.scale = nn.Parameter(torch.tensor(1.0 / math.sqrt(2 * (layer_idx + 1))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.scale * self.fc2(F.gelu(self.fc1(self.norm(x))))


class Model(nn.Module):
    """An input projection, `depth` blocks of the same shape, and a head."""

    def __init__(self, inputs: int = 12, dim: int = 32, depth: int = 6, outputs: int = 5) -> None:
        super().__init__()
        self.embed = nn.Linear(inputs, dim)
        self.blocks = nn.ModuleList([Block(dim, i) for i in range(depth)])
        self.head = nn.Linear(dim, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def compile_regions(model: Model, backend="inductor") -> Model:
    """Compile `model`'s blocks in place with `backend`, so that one graph serves all of them;
    return `model`."""
    for block in model.blocks:
        block.compile(backend=backend)
    return model
