"""RIGHT: the policy matches op.overloadpacket (every overload of mm, addmm, bmm, baddbmm) and answers MUST_RECOMPUTE for the rest; context_fn is a lambda that builds a fresh pair per call."""

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


_MATMUL_PACKETS = (aten.mm, aten.addmm, aten.bmm, aten.baddbmm)


def policy(ctx, op, *args, **kwargs) -> CheckpointPolicy:
    """For each op a checkpointed block runs: keep its output for backward, or recompute it?"""
    packet = getattr(op, "overloadpacket", None)
    if any(packet is p for p in _MATMUL_PACKETS):
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.MUST_RECOMPUTE


def selective_forward(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Run `stack` on `x`, checkpointing every block with `policy`."""
    h = x
    for block in stack:
        h = checkpoint(
            block,
            h,
            use_reentrant=False,
            context_fn=lambda: create_selective_checkpoint_contexts(policy),
        )
    return h
