"""WRONG: keeps layer_idx a Python int and silences its guard by setting the process-wide torch._dynamo.config.allow_unspec_int_on_nn_module = True at import, which changes how Dynamo treats int attributes of every module in the process (the task: change how Block keeps its per-block data, not Dynamo's global configuration)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch._dynamo

torch._dynamo.config.allow_unspec_int_on_nn_module = True


class Block(nn.Module):
    """A pre-norm MLP block whose residual branch is scaled by 1/sqrt(2 * (layer_idx + 1)),
    so deeper blocks add smaller updates."""

    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.layer_idx = layer_idx

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1.0 / math.sqrt(2 * (self.layer_idx + 1))
        return x + scale * self.fc2(F.gelu(self.fc1(self.norm(x))))


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
        block.compile(backend=backend, dynamic=True)
    return model
