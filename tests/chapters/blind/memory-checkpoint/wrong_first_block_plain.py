"""WRONG: runs the first block without a checkpoint (its input is data, so "nothing to gain"), so that block's whole hidden activations stay alive from forward to the end of backward, breaking "between the forward and the backward pass only the blocks' inputs are kept"."""

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
    # The first block sees raw data, which does not require grad: run it plainly and
    # checkpoint the blocks whose inputs come out of the network.
    h = stack[0](x)
    for block in list(stack)[1:]:
        h = checkpoint(block, h, use_reentrant=False)
    return h
