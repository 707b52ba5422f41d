"""WRONG: memoizes the checkpoint read per path (functools.lru_cache), so a second load from the same directory returns the first save's values, against "the second load must see the second save"."""

import torch
import torch.distributed.checkpoint as dcp
import torch.nn as nn
import torch.nn.functional as F
import functools
import os
import tempfile

from torch.distributed.checkpoint.format_utils import dcp_to_torch_save


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, dim: int, n_layers: int, out_features: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(dim) for _ in range(n_layers))
        self.head = nn.Linear(dim, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


@functools.lru_cache(maxsize=None)
def _read_checkpoint(path: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "full.pt")
        dcp_to_torch_save(path, target)
        return torch.load(target, weights_only=True)


def save_sharded(model: nn.Module, path: str) -> None:
    """Called on every rank with the FSDP2-sharded model: each rank writes its own shards."""
    dcp.save(model.state_dict(), checkpoint_id=path)


def load_full(model: nn.Module, path: str) -> None:
    """Load the checkpoint at `path` into `model`, an ordinary unsharded Net, in place."""
    model.load_state_dict(_read_checkpoint(path))
