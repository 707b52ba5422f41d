"""The capstone's baseline, the checker's own copy: the model and training step the learner's
step is measured against, and the synthetic task both train on.

The exercise file starts with the same model code (a test keeps the two identical), but the
checker never takes the baseline from the learner's file: editing it there cannot make the
baseline slower or change the curve the learner's step is compared with.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class Sizes:
    vocab: int
    width: int
    heads: int
    layers: int
    seq: int
    batch: int

    def config(self) -> dict[str, int]:
        """The sizes as the learner's predict(config) and make_step(model, lr, config) get them."""
        return {
            "vocab": self.vocab,
            "width": self.width,
            "heads": self.heads,
            "layers": self.layers,
            "seq": self.seq,
            "batch": self.batch,
        }


# The two sizes each run draws from, per device: a long, narrow model, where the attention's
# seq x seq weights are most of the step, and a short, wide one, where they are a small part and
# the matmuls and the optimizer's update are the rest. bench/bench_capstone.py measures every
# technique at each. CUDA: large enough that the step is not bound by kernel launches.
DRAWS = {
    "cpu": (
        [Sizes(vocab=96, width=48, heads=4, layers=2, seq=s, batch=b) for s in (448, 512) for b in (3, 4)],
        [Sizes(vocab=96, width=256, heads=4, layers=2, seq=32, batch=4)],
    ),
    "cuda": (
        [Sizes(vocab=512, width=w, heads=4, layers=4, seq=s, batch=16) for s in (1024, 2048) for w in (128, 192)],
        [Sizes(vocab=512, width=w, heads=8, layers=4, seq=s, batch=16) for s in (64, 128) for w in (1024, 1536)],
    ),
}


def draw_sizes(seed: int, device: str = "cpu") -> list[Sizes]:
    """This run's two sizes, one of each kind, fixed by `seed`."""
    pick = random.Random(seed)
    return [pick.choice(options) for options in DRAWS["cuda" if device == "cuda" else "cpu"]]


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
        scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
        future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        y = weights @ v
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


def make_baseline_step(model: nn.Module, lr: float):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def step(tokens: torch.Tensor, targets: torch.Tensor) -> float:
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def build(sizes: Sizes, seed: int, device: torch.device) -> TinyTransformer:
    """The baseline model with weights fixed by `seed`."""
    cpu_rng = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = TinyTransformer(sizes.vocab, sizes.width, sizes.heads, sizes.layers, sizes.seq)
    torch.random.set_rng_state(cpu_rng)  # the caller's random stream is left as it was
    return model.to(device)


def markov_batches(
    generator: torch.Generator, sizes: Sizes, count: int, device: torch.device
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """`count` (tokens, targets) batches of a random Markov chain in which every token has three
    possible successors: learnable in a few steps (the loss floor is ln 3), different per seed."""
    table = torch.randint(0, sizes.vocab, (sizes.vocab, 3), generator=generator)
    rows = count * sizes.batch  # every batch's sequences at once: one loop over positions
    seqs = torch.empty(rows, sizes.seq + 1, dtype=torch.long)
    seqs[:, 0] = torch.randint(0, sizes.vocab, (rows,), generator=generator)
    pick = torch.randint(0, 3, (rows, sizes.seq), generator=generator)
    for i in range(sizes.seq):
        seqs[:, i + 1] = table[seqs[:, i], pick[:, i]]
    return [(s[:, :-1].contiguous().to(device), s[:, 1:].contiguous().to(device)) for s in seqs.split(sizes.batch)]
