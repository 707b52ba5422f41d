"""Exercise: export a two-input model whose batch size may be anything from 1 to 100.

`Pooler` is given. Complete `export_pooler` so that the ExportedProgram it returns runs for
every batch size from 1 to 100 and rejects batch 101 (and larger) with an error. The
sequence length (10) and the feature size (12) stay fixed.
"""

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
    # TODO: tell export which dimension of each input is the batch, and the range it may take.
    # TODO: watch out: the model combines the two inputs, so their batch sizes are not
    #       independent; and "dynamic" without a limit would also accept batch 101.
    raise NotImplementedError("TODO: export with a dynamic batch dimension")
