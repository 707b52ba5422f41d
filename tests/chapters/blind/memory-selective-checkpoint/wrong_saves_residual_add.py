"""WRONG: the policy also MUST_SAVEs aten.add (the residual sum, i.e. each block's output), so forward keeps an extra (rows, width) tensor per block that a cheap op could rebuild, breaking "keeps the outputs of the matrix multiplications and lets everything else be recomputed"."""

import functools

import torch
from torch import nn
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

aten = torch.ops.aten


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


MATMULS = {aten.mm.default, aten.addmm.default, aten.bmm.default}


def policy(ctx, op, *args, **kwargs) -> CheckpointPolicy:
    """For each op a checkpointed block runs: keep its output for backward, or recompute it?"""
    if op in MATMULS:
        return CheckpointPolicy.MUST_SAVE
    if op == aten.add.Tensor:
        return CheckpointPolicy.MUST_SAVE  # the block output is the next block's input: keep it
    return CheckpointPolicy.PREFER_RECOMPUTE


def selective_forward(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Run `stack` on `x`, checkpointing every block with `policy`."""
    context_fn = functools.partial(create_selective_checkpoint_contexts, policy)
    h = x
    for block in stack:
        h = checkpoint(block, h, use_reentrant=False, context_fn=context_fn)
    return h
