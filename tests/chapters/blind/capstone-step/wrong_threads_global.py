"""WRONG: make_step pins the whole process to one intra-op thread with torch.set_num_threads(1) "for stable timing" and never restores it, a global setting the caller owns; the exercise allows changing this file's step, not the process's configuration."""

import torch
from torch import nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, width = x.shape
        head_dim = width // self.heads
        # (batch, seq, 3 * width) -> q, k, v, each (batch, heads, seq, head_dim)
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, head_dim).permute(2, 0, 3, 1, 4)
        # One fused kernel for scores, mask, softmax and the weighted sum: it never stores the
        # (seq x seq) attention weights, only a log-sum-exp per row for backward.
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(batch, seq, width))


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyTransformer(nn.Module):
    def __init__(self, vocab: int, width: int, heads: int, layers: int, max_len: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(max_len, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq = tokens.shape[1]
        x = self.tokens(tokens) + self.positions(torch.arange(seq, device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def make_step(model: nn.Module, lr: float):
    """Return step(tokens, targets) -> float: one AdamW step on the batch, returning its loss."""
    # One fused kernel updates every parameter (instead of a chain of foreach ops and their
    # temporaries): the same AdamW arithmetic.
    torch.set_num_threads(1)  # one thread: no oversubscription on a small step
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)

    def step(tokens: torch.Tensor, targets: torch.Tensor) -> float:
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        return loss.item()

    return step
