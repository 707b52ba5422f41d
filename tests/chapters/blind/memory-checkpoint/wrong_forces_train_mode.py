"""WRONG: calls stack.train() before running (checkpointing "is for training"), so a caller who had put the stack in eval mode gets it back in train mode, a change of the caller's module that "returns what stack(x) returns" never allows."""

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
    stack.train()  # checkpointing only makes sense while training
    h = x
    for block in stack:
        h = checkpoint(block, h, use_reentrant=False)
    return h
