"""Reference solution: compile a transformer block with Inductor, and time it the right way."""

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
    return torch.compile(block, fullgraph=True)  # key


def _sync() -> None:
    # CUDA kernels run asynchronously: wait for them before reading the clock.
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_per_call(fn, *args, warmup: int = 3, iters: int = 20) -> float:
    """Seconds per call of fn(*args) in steady state."""
    for _ in range(warmup):  # the first call compiles; later ones may still autotune or warm caches
        fn(*args)
    _sync()  # key: the warm-up's kernels finish before the clock starts
    start = time.perf_counter()
    for _ in range(iters):
        fn(*args)
    _sync()
    return (time.perf_counter() - start) / iters  # key
