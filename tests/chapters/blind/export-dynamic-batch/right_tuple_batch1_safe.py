"""RIGHT: passes dynamic_shapes as a positional tuple instead of a dict keyed by argument names, and also copes with a batch-1 example (which the straightforward export rejects) by tracing with that row repeated."""

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
    # A size-1 example would be specialised while tracing (1 broadcasts): trace with two rows.
    if tokens.shape[0] == 1:
        tokens = tokens.expand(2, *tokens.shape[1:]).contiguous()
        mask = mask.expand(2, *mask.shape[1:]).contiguous()
    # Tuple form, in the order of forward's arguments; one Dim object shared by both inputs.
    return torch.export.export(model, (tokens, mask), dynamic_shapes=({0: batch}, {0: batch}))
