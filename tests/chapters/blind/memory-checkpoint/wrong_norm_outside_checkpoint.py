"""WRONG: checkpoints only the MLP branch of each block and runs the LayerNorm (and the residual add) outside, so each block keeps its normalised input and LayerNorm's statistics on top of its input, breaking "only the blocks' inputs are kept" (the region should be one block)."""

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


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
    h = x
    for block in stack:
        # the expensive, wide part of the block is the MLP: recompute that in backward
        mlp = lambda t, b=block: b.fc2(nn.functional.gelu(b.fc1(t)))
        h = h + checkpoint(mlp, block.norm(h), use_reentrant=False)
    return h
