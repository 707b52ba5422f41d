"""RIGHT: replaces each block in the ModuleList with the OptimizedModule that torch.compile returns instead of calling block.compile(); the state_dict keys gain _orig_mod., a side effect the guide points out but does not forbid, and the exercise's own hint 3 says to "put it back into model.blocks" (moved from wrong_: the stub's "IN PLACE" and that hint disagree, so the learner is accepted; the chapter test test_regional_wrapping_each_block_and_a_persistent_buffer_pass asserts the same)."""

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
    for i, block in enumerate(model.blocks):
        model.blocks[i] = torch.compile(block, backend=backend)
    return model
