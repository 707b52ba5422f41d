"""WRONG: calls x.requires_grad_() on the caller's data tensor so checkpointing "sees" an input that needs grad, which leaves the caller's batch requiring grad and collecting a .grad it never asked for (the stub: "the input x usually does not require grad (data never does), yet every parameter must still get its gradient")."""

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
    if not x.requires_grad:
        x.requires_grad_()  # so the checkpointed blocks have an input that needs grad
    h = x
    for block in stack:
        h = checkpoint(block, h, use_reentrant=False)
    return h
