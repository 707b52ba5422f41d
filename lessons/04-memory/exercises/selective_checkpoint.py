"""Exercise: selective activation checkpointing of a deep stack of residual MLP blocks.

Plain checkpointing keeps only each block's input and reruns the whole block in backward,
matmuls included. Selective checkpointing lets a policy decide, op by op, what forward keeps
and what backward recomputes. Here: keep what the expensive ops produce, recompute the cheap
ones. `selective_forward(stack, x)` must return exactly what `stack(x)` returns, with the same
gradients.

`Block` and `build_stack` are given (the checker builds its stacks with the same code).
"""

import functools  # noqa: F401  (you will need it)

import torch
from torch import nn
from torch.utils.checkpoint import (  # noqa: F401  (you will need them)
    CheckpointPolicy,
    checkpoint,
    create_selective_checkpoint_contexts,
)


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


def policy(ctx, op, *args, **kwargs) -> CheckpointPolicy:
    """For each op a checkpointed block runs: keep its output for backward, or recompute it?"""
    # TODO: decide per op. The matrix multiplications are the expensive ones: backward must
    #       never run them again. Everything else in the block is cheap and should be
    #       recomputed. Watch out: `op` is not a Python function or a name, and nn.Linear is
    #       not what the policy sees.
    raise NotImplementedError("TODO: implement policy")


def selective_forward(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Run `stack` on `x`, checkpointing every block with `policy`."""
    # TODO: the same output and gradients as stack(x); every block checkpointed so that its
    #       cheap ops are recomputed in backward and its matmuls are not. Watch out: the input
    #       does not require grad, and not every checkpoint implementation takes a policy.
    raise NotImplementedError("TODO: implement selective_forward")
