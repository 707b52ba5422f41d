"""RIGHT: fused causal SDPA chosen through an explicit sdpa_kernel backend list, the default foreach AdamW instead of the fused one, and the step as a callable object that clears grads by hand and returns float(loss.detach())."""

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


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
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
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


class _Step:
    """One AdamW update of `model` per call; returns the batch's mean cross-entropy as a float."""

    def __init__(self, model: nn.Module, lr: float) -> None:
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, foreach=True)

    def __call__(self, tokens: torch.Tensor, targets: torch.Tensor) -> float:
        for p in self.model.parameters():
            p.grad = None
        logits = self.model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        self.optimizer.step()
        return float(loss.detach())


def make_step(model: nn.Module, lr: float):
    """Return step(tokens, targets) -> float: one AdamW step on the batch, returning its loss."""
    return _Step(model, lr)
