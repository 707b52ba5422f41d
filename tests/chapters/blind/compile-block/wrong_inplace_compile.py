"""WRONG: compile_block compiles the caller's module in place (block.compile) and returns it, so compile_cost's "eager" timing of model(x) actually runs the compiled code and the caller's model is left compiled (task: eager_s is "the steady-state seconds per call of model(x)", i.e. the uncompiled model)."""

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
    block.compile(fullgraph=True)
    return block


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_per_call(fn, *args, warmup: int = 3, iters: int = 20) -> float:
    """Seconds per call of fn(*args) in steady state."""
    for _ in range(warmup):
        fn(*args)
    _sync()
    start = time.perf_counter()
    for _ in range(iters):
        fn(*args)
    _sync()
    return (time.perf_counter() - start) / iters


def compile_cost(model: nn.Module, x: torch.Tensor, warmup: int = 3, iters: int = 20) -> dict[str, float]:
    """What compiling `model` for inputs like `x` costs, and after how many calls it pays back."""
    torch.compiler.reset()
    compiled = compile_block(model)
    _sync()
    start = time.perf_counter()
    compiled(x)
    _sync()
    first_s = time.perf_counter() - start
    compiled_s = time_per_call(compiled, x, warmup=warmup, iters=iters)
    eager_s = time_per_call(model, x, warmup=warmup, iters=iters)
    compile_s = max(first_s - compiled_s, 0.0)
    saved_s = eager_s - compiled_s
    break_even = compile_s / saved_s if saved_s > 0 else math.inf
    return {"compile_s": compile_s, "eager_s": eager_s, "compiled_s": compiled_s, "break_even_calls": break_even}


def should_compile(cost: dict[str, float], calls: int) -> bool:
    """Whether compiling pays for a job of `calls` calls, from compile_cost's figures."""
    return calls > cost["break_even_calls"]
