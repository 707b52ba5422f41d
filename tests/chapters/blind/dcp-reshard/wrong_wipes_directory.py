"""WRONG: has rank 0 delete the whole directory `path` (shutil.rmtree) before saving to dodge the overwrite warning, which destroys anything else the caller keeps there although the task only says to "save its state into the directory `path`"."""

import torch
import torch.distributed.checkpoint as dcp
import torch.nn as nn
import torch.nn.functional as F
import os
import shutil

import torch.distributed as dist


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


def save_sharded(model: nn.Module, path: str) -> None:
    """Called on every rank with the FSDP2-sharded model: each rank writes its own shards."""
    if dist.get_rank() == 0 and os.path.isdir(path):
        shutil.rmtree(path)  # start from a clean directory, no stale shards
    dist.barrier()
    dcp.save(model.state_dict(), checkpoint_id=path)


def load_full(model: nn.Module, path: str) -> None:
    """Load the checkpoint at `path` into `model`, an ordinary unsharded Net, in place."""
    state = model.state_dict()
    dcp.load(state, checkpoint_id=path)
    model.load_state_dict(state)
