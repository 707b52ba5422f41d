"""WRONG: loads into fresh tensors and calls load_state_dict(..., assign=True), which swaps in new Parameter objects and leaves the model's original parameters at their initial values, although load_full must "fill `model` ... in place"."""

import torch
import torch.distributed.checkpoint as dcp
import torch.nn as nn
import torch.nn.functional as F


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
    dcp.save(model.state_dict(), checkpoint_id=path)


def load_full(model: nn.Module, path: str) -> None:
    """Load the checkpoint at `path` into `model`, an ordinary unsharded Net, in place."""
    state = {k: torch.empty_like(v) for k, v in model.state_dict().items()}
    dcp.load(state, checkpoint_id=path)
    model.load_state_dict(state, assign=True)  # take the loaded tensors, no extra copy
