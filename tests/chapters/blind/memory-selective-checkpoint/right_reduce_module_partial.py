"""RIGHT: a module-level functools.partial as context_fn (it still returns a fresh pair per call), a frozenset with a conditional expression as policy, functools.reduce over the blocks, and a plain run when grad mode is off."""

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


_SAVE = frozenset({aten.mm.default, aten.addmm.default, aten.bmm.default})


def policy(ctx, op, *args, **kwargs) -> CheckpointPolicy:
    """For each op a checkpointed block runs: keep its output for backward, or recompute it?"""
    return CheckpointPolicy.MUST_SAVE if op in _SAVE else CheckpointPolicy.PREFER_RECOMPUTE


_context_fn = functools.partial(create_selective_checkpoint_contexts, policy)


def selective_forward(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Run `stack` on `x`, checkpointing every block with `policy`."""
    if not torch.is_grad_enabled():
        return stack(x)  # nothing is saved for backward: nothing to checkpoint
    return functools.reduce(
        lambda h, block: checkpoint(block, h, use_reentrant=False, context_fn=_context_fn), stack, x
    )
