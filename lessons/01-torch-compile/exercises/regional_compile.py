"""Exercise: compile the repeated block, not the whole model.

`Model` stacks `depth` blocks of the same shape between an input projection and a head.
Compiling the whole model traces every block into one big graph, so its compile time grows
with the depth, although the blocks all run the same code. Compile the repeated region instead:

- `compile_regions(model, backend)` compiles the model's blocks IN PLACE, with the `backend`
  it is given (the check counts graphs through it), and returns `model` itself;
- ONE compiled graph must serve every block, on every training step: the check fails when
  the backend receives a graph per block, or a graph holding the whole model;
- outputs and gradients stay what eager mode computes.

You may change how `Block` keeps its per-block data, not what it computes, and not the layers.
When the check reports a graph per block, read Dynamo's recompile reasons.
"""

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
    # TODO: compile the repeated region (each block), not the whole model, and make sure the
    #       blocks can share one compiled graph. Watch out: whatever torch.compile returns is
    #       what runs compiled; the model has to end up calling it.
    raise NotImplementedError("TODO: compile the model's blocks")
