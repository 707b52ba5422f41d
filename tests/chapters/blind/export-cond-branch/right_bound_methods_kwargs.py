"""RIGHT: uses bound helper methods as branches and calls torch.cond with keyword arguments, the predicate built with Tensor.gt, instead of passing the submodules positionally."""

import torch
import torch.nn as nn


class Gate(nn.Module):
    """Sends a batch through a deep path when its signal is strong (mean |x| > 1), and through a
    cheap path otherwise. The decision is made for the whole batch."""

    def __init__(self, dim: int = 16) -> None:
        super().__init__()
        self.cheap = nn.Linear(dim, dim)
        self.deep = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))

    def _deep_path(self, x: torch.Tensor) -> torch.Tensor:
        return self.deep(x)

    def _cheap_path(self, x: torch.Tensor) -> torch.Tensor:
        return self.cheap(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        signal = x.abs().mean()
        return torch.cond(pred=signal.gt(1.0), true_fn=self._deep_path, false_fn=self._cheap_path, operands=(x,))
