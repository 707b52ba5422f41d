"""Exercise: compile a transformer block with Inductor, and time it the right way.

`Block` is given. Complete the two functions below:

- `compile_block(block)` returns the block compiled with Inductor (the default backend), such
  that a graph break raises an error instead of silently splitting the block into pieces;
- `time_per_call(fn, *args, warmup, iters)` returns the seconds per call of `fn(*args)` in
  steady state: the first calls (which compile) are not timed, and on a GPU the clock is read
  only after the queued kernels have finished.
"""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention, then an MLP. Given; don't change it."""

    def __init__(self, dim: int = 64, heads: int = 4, mlp_ratio: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(dim, dim=-1)
        # (batch, seq, dim) -> (batch, heads, seq, dim // heads)
        q, k, v = (t.view(batch, seq, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(batch, seq, dim))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def compile_block(block: nn.Module) -> nn.Module:
    """Return `block` compiled with Inductor; a graph break is an error, not a silent split."""
    # TODO: compile with Inductor (the default backend) so that a graph break raises an error
    #       instead of quietly splitting the block into several graphs.
    raise NotImplementedError("TODO: compile the block")


def time_per_call(fn, *args, warmup: int = 3, iters: int = 20) -> float:
    """Seconds per call of fn(*args) in steady state."""
    # TODO: return the seconds ONE call of fn(*args) takes once it is warm. Watch out:
    #       - the first calls compile (or autotune): they must not be on the clock;
    #       - fn is called exactly warmup + iters times, and only the timed calls count;
    #       - on a GPU a call returns before its kernels have run, and the warm-up's kernels may
    #         still be running when you start the clock (the check simulates this on CPU).
    raise NotImplementedError("TODO: time fn in steady state")
