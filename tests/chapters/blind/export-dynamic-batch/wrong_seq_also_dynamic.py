"""WRONG: also makes the sequence axis dynamic, so the program accepts sequences of 11 or 300 positions, against "keeps the sequence length (10) and the feature size (12) fixed"."""

import torch
import torch.nn as nn
from torch.export import Dim, ExportedProgram


class Pooler(nn.Module):
    """Masked mean-pooling over a fixed-length sequence, then a linear head.

    tokens: (batch, 10, 12) float, mask: (batch, 10) bool  ->  (batch, 3) scores
    """

    def __init__(self, features: int = 12, hidden: int = 32, classes: int = 3) -> None:
        super().__init__()
        self.proj = nn.Linear(features, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.proj(tokens))
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)
        return self.head(pooled)


def export_pooler(model: nn.Module, tokens: torch.Tensor, mask: torch.Tensor) -> ExportedProgram:
    """Export `model` so that the program accepts any batch size from 1 to 100 (and no other)."""
    batch = Dim("batch", min=1, max=100)
    seq = Dim("seq", min=1, max=512)  # one symbol for the sequence axis of both inputs
    dynamic_shapes = {"tokens": {0: batch, 1: seq}, "mask": {0: batch, 1: seq}}
    return torch.export.export(model, (tokens, mask), dynamic_shapes=dynamic_shapes)
