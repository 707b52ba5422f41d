"""RIGHT: goes through torch.distributed.checkpoint.state_dict (get_model_state_dict for the sharded save, set_model_state_dict for the load) instead of module.state_dict()/load_state_dict."""

import torch
import torch.distributed.checkpoint as dcp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict


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
    state = get_model_state_dict(model)  # sharded DTensors, nothing gathered
    dcp.save(state, checkpoint_id=path)


def load_full(model: nn.Module, path: str) -> None:
    """Load the checkpoint at `path` into `model`, an ordinary unsharded Net, in place."""
    state = {k: torch.empty_like(v) for k, v in model.state_dict().items()}
    dcp.load(state, checkpoint_id=path)
    set_model_state_dict(model, state)
