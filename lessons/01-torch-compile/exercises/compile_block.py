"""Exercise: compile a transformer block with Inductor, time it the right way, and decide when
compiling pays for itself.

`Block` is given. Complete the four functions below:

- `compile_block(block)` returns the block compiled with Inductor (the default backend), such
  that a graph break raises an error instead of silently splitting the block into pieces;
- `time_per_call(fn, *args, warmup, iters)` returns the seconds per call of `fn(*args)` in
  steady state: the first calls (which compile) are not timed, and on a GPU the clock is read
  only after the queued kernels have finished;
- `compile_cost(model, x, warmup, iters)` measures what compiling `model` costs and how many
  calls it takes to earn that back;
- `should_compile(cost, calls)` decides, from those figures, whether a job of `calls` calls
  should be compiled.
"""

import math
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


def compile_cost(model: nn.Module, x: torch.Tensor, warmup: int = 3, iters: int = 20) -> dict[str, float]:
    """What compiling `model` for inputs like `x` costs, and after how many calls it pays back."""
    # TODO: return a dict with four figures, all measured here, in seconds:
    #       "compile_s": what the compile adds to the first call of the compiled model
    #                    (that call's time beyond an ordinary, steady-state call);
    #       "eager_s", "compiled_s": steady-state seconds per call of model(x) and of the
    #                    compiled model, each with your time_per_call(..., warmup, iters);
    #       "break_even_calls": after how many calls compiling has paid for itself;
    #                    math.inf when the compiled model is not faster.
    #       Compile with your compile_block. Watch out:
    #       - find out when torch.compile actually does its work before you decide what to time;
    #       - the check may hand you a model whose code was already compiled in this process (it
    #         is), and compile_s must still measure a real compile.
    raise NotImplementedError("TODO: measure the compile and its break-even")


def should_compile(cost: dict[str, float], calls: int) -> bool:
    """Whether compiling pays for a job of `calls` calls, from compile_cost's figures."""
    # TODO: True when compiling (the compile, then `calls` compiled calls) finishes the job
    #       sooner than `calls` eager calls; False otherwise, including when compiling never pays.
    raise NotImplementedError("TODO: decide whether compiling pays for this job")
