"""Exercise: a data-dependent branch that torch.export can capture.

`Gate.forward` decides with a Python `if` on a tensor's value. That works in eager mode, but
torch.export has to produce ONE graph for every possible input, and a Python `if` can only
follow one side. Rewrite the branch with `torch.cond` so that

    torch.export.export(Gate(), (x,))

succeeds and the exported program takes the right branch for every input. Keep `cheap`,
`deep` and what the model computes; keep the signature `forward(self, x)`.
"""

import torch
import torch.nn as nn


class Gate(nn.Module):
    """Sends a batch through a deep path when its signal is strong (mean |x| > 1), and through a
    cheap path otherwise. The decision is made for the whole batch."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.cheap = nn.Linear(dim, dim)
        self.deep = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # TODO: torch.export cannot capture this `if`. Make the graph itself choose the path,
        #       so that one exported program serves strong and weak inputs alike. Only the
        #       chosen path should run (no computing both and selecting).
        if x.abs().mean() > 1.0:
            return self.deep(x)
        return self.cheap(x)
