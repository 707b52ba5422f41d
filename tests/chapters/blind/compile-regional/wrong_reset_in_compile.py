"""WRONG: calls torch.compiler.reset() before compiling the blocks "so the count starts clean", which throws away every compiled function in the whole process, not just this model's (guide: reset "drops every compiled function in the process, so keep it to measuring code")."""

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
        self.register_buffer("scale", torch.tensor(1.0 / math.sqrt(2 * (layer_idx + 1))), persistent=False)

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
    torch.compiler.reset()
    for block in model.blocks:
        block.compile(backend=backend)
    return model
