"""Exercise: distributed checkpointing with torch.distributed.checkpoint (DCP).

A model sharded with FSDP2 over the ranks is saved as a sharded checkpoint: every rank writes only
the pieces it holds. The checkpoint is then loaded into a model with another layout: an
ordinary, unsharded Net (as one process would use for evaluation or export).

Run it yourself with two CPU processes:
    torchrun --standalone --nproc-per-node=2 dcp_reshard.py
"""

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
    # TODO: save the model's state into the checkpoint directory `path` with DCP, so that each
    #       rank writes only the shards it holds (no full copy of any parameter).
    # Watch out: every rank calls this function, and the save is a collective.
    raise NotImplementedError("TODO: implement save_sharded")


def load_full(model: nn.Module, path: str) -> None:
    """Load the checkpoint at `path` into `model`, an ordinary unsharded Net, in place."""
    # TODO: fill `model` with the values stored in the checkpoint directory `path`. The
    #       checkpoint was written in shards, by every rank of the job that saved it;
    #       `model` holds ordinary full tensors.
    # Watch out: DCP loads into the tensors of the state dict you give it.
    raise NotImplementedError("TODO: implement load_full")


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 dcp_reshard.py
    import os
    import tempfile

    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = Net(dim=8, n_layers=2, out_features=2)
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    path = [tempfile.mkdtemp() if rank == 0 else None]
    dist.broadcast_object_list(path)             # one directory for every rank
    save_sharded(model, path[0])
    dist.barrier()
    if rank == 0:
        print("files:", sorted(os.listdir(path[0])))
    plain = Net(dim=8, n_layers=2, out_features=2)
    load_full(plain, path[0])
    full = {k: v.full_tensor() for k, v in model.state_dict().items()}
    same = all(torch.equal(plain.state_dict()[k], v) for k, v in full.items())
    print(f"rank {rank}: unsharded copy equals the sharded model: {same}")
    dist.destroy_process_group()
