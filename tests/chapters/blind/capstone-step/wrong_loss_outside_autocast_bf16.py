"""WRONG: at the short, wide size it runs only the model under bf16 autocast and computes cross_entropy after the autocast block straight from the bf16 logits, so the loss itself is a bf16 number; the guide says "keep ... the loss in float32 (autocast casts on the fly; cast the logits with .float() if you compute the loss outside it)"."""

import torch
from torch import nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    fused = False  # make_step switches fused attention on where the sizes call for it

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
        if self.fused:
            # One kernel for scores, mask, softmax and the weighted sum: it never stores the
            # (seq x seq) weights, only a log-sum-exp per row for backward.
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # key
        else:
            scores = q @ k.transpose(-2, -1) / head_dim**0.5
            future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
            y = scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ v
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


def attention_bound(config: dict) -> bool:
    """True where the softmax weights (heads * seq floats per token and block) outweigh the
    block's width-sized activations (about 16 * width)."""
    return config["heads"] * config["seq"] > 16 * config["width"]  # key


def predict(config: dict) -> dict:
    """The figures of make_step's step at these sizes, from counts of what each side keeps."""
    layers, width, heads, seq = config["layers"], config["width"], config["heads"], config["seq"]
    if attention_bound(config):
        # Floats per token at the peak (the start of backward): every block's width-sized
        # activations (about 21 * width with the residual stream and the loss's share), and for
        # the baseline also every block's softmax weights plus two (seq x seq) temporaries of
        # the backward that is running.
        mine = layers * 21 * width
        baseline = mine + (layers + 2) * heads * seq
        # The by-hand attention's share of the time grows with heads * seq against the width;
        # fused, that share nearly vanishes (measured: 1.5x at seq 256, width 64).
        return {"speedup": 1.2 + 0.3 * heads * seq / (21 * width), "memory_saved": 1 - mine / baseline}  # key
    # The optimizer's update is the peak: the foreach AdamW's temporaries go, the gradients stay;
    # bf16 matmuls make the step about 1.6x as fast on a CPU with bf16 instructions.
    return {"speedup": 1.6, "memory_saved": 0.62}  # key


def make_step(model: nn.Module, lr: float, config: dict):
    """Return step(tokens, targets) -> float: one AdamW step on the batch, returning its loss."""
    long = attention_bound(config)
    for block in model.blocks:
        block.attn.fused = long  # key
    low_precision = not long
    # One fused kernel updates every parameter in place (no foreach temporaries): the same
    # AdamW arithmetic.
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)  # key

    def step(tokens: torch.Tensor, targets: torch.Tensor) -> float:
        optimizer.zero_grad()
        # bf16 matmuls where the matmuls are the time; cross_entropy stays float32 in autocast.
        with torch.autocast(device_type=tokens.device.type, dtype=torch.bfloat16, enabled=low_precision):  # key
            logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        return loss.item()

    return step
