"""Reference solution: selective activation checkpointing of a deep stack of residual MLP blocks.
Keep the matmul outputs (expensive to redo), recompute the cheap pointwise ops in backward."""

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


# The policy sees ATen overloads, after nn.Linear has been lowered: a Linear with a bias on a
# 2-D (or flattened N-D) input runs aten.addmm, one without a bias aten.mm, a batched matmul bmm.
MATMULS = {aten.mm.default, aten.addmm.default, aten.bmm.default}  # key


def policy(ctx, op, *args, **kwargs) -> CheckpointPolicy:
    """Save what the matmuls produce; recompute everything else (norms, activations, adds)."""
    if op in MATMULS:
        return CheckpointPolicy.MUST_SAVE  # key
    return CheckpointPolicy.PREFER_RECOMPUTE  # key


def selective_forward(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Run `stack` on `x`, checkpointing every block with `policy`: backward reruns the cheap
    ops of a block but reads its matmul outputs from what forward kept."""
    # context_fn must build a fresh pair of context managers for every checkpointed call.
    context_fn = functools.partial(create_selective_checkpoint_contexts, policy)  # key
    h = x
    for block in stack:
        # Selective checkpointing only exists in the non-reentrant implementation.
        h = checkpoint(block, h, use_reentrant=False, context_fn=context_fn)  # key
    return h
