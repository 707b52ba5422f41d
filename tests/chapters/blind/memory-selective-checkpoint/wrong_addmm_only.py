"""WRONG: the policy saves aten.addmm only (what the Block's biased Linears lower to), so a bias-free Linear (aten.mm) or a batched matmul (aten.bmm) is recomputed in backward, breaking "policy keeps the outputs of the matrix multiplications" (the guide: with a bias addmm, without one aten.mm)."""

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


def policy(ctx, op, *args, **kwargs) -> CheckpointPolicy:
    """For each op a checkpointed block runs: keep its output for backward, or recompute it?"""
    # nn.Linear (with its bias) reaches the policy as aten.addmm
    if op == aten.addmm.default:
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


def selective_forward(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Run `stack` on `x`, checkpointing every block with `policy`."""
    context_fn = functools.partial(create_selective_checkpoint_contexts, policy)
    h = x
    for block in stack:
        h = checkpoint(block, h, use_reentrant=False, context_fn=context_fn)
    return h
