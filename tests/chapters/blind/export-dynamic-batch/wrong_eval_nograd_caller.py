"""WRONG: switches the caller's model to eval mode and turns off requires_grad on its parameters before exporting, and never restores them; the task is only to export the given model, not to change it."""

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
    model.eval()  # a deployment artefact: export the inference behaviour
    model.requires_grad_(False)
    batch = Dim("batch", min=1, max=100)
    dynamic_shapes = {"tokens": {0: batch}, "mask": {0: batch}}
    return torch.export.export(model, (tokens, mask), dynamic_shapes=dynamic_shapes)
