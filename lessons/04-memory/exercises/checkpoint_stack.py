"""Exercise: activation checkpointing of a deep stack of residual MLP blocks.

`checkpointed_forward(stack, x)` must return exactly what `stack(x)` returns, with the same
gradients, but keep far less memory alive between forward and backward: only each block's
input, with the block's insides recomputed when backward reaches it.

`Block` and `build_stack` are given (the checker builds its stacks with the same code).
"""

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint  # noqa: F401  (you will need it)


class Block(nn.Module):
    """A pre-norm residual MLP block: x + fc2(gelu(fc1(norm(x))))."""

    def __init__(self, width: int, expansion: int = 4) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, expansion * width)
        self.fc2 = nn.Linear(expansion * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm(x))))


def build_stack(depth: int, width: int) -> nn.Sequential:
    return nn.Sequential(*(Block(width) for _ in range(depth)))


def checkpointed_forward(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Run `stack` on `x`, keeping only each block's input for backward."""
    # TODO: the same output and gradients as stack(x), with only each block's input kept alive
    #       between forward and backward. Watch out: the input x usually does not require grad
    #       (data never does), yet every parameter must still get its gradient; and one
    #       checkpoint around the whole stack saves nothing at the peak.
    raise NotImplementedError("TODO: implement checkpointed_forward")
