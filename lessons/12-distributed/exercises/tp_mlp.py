"""Exercise: tensor-parallel SwiGLU feed-forward stack with parallelize_module.

Every rank builds the same MLPStack, then `parallelize_mlp` shards its weights over the 1-D
device mesh so that each rank holds 1/world_size of every w1, w3 and w2. The sharded model,
given the same input on every rank, must return exactly what the unsharded model returns.

Run it yourself with two CPU processes:
    torchrun --standalone --nproc-per-node=2 tp_mlp.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


class FeedForward(nn.Module):
    """The MLP of a Llama-style block: w2(silu(w1(x)) * w3(x))."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w3 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MLPStack(nn.Module):
    """Several feed-forward blocks with residual connections."""

    def __init__(self, dim: int, hidden: int, n_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(FeedForward(dim, hidden) for _ in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = x + layer(x)
        return x


def parallelize_mlp(model: MLPStack, mesh: DeviceMesh) -> MLPStack:
    """Shard every block over `mesh`: w1 and w3 by output features, w2 by input features."""
    # TODO: shard w1, w3 and w2 of EVERY block over `mesh` (each rank keeps 1/world_size of
    #       each weight) and return the model.
    # Watch out: the sharded model must compute exactly what the unsharded one does, with one
    #       all-reduce per block: think about which dimension each layer should split so that
    #       the slice one layer leaves on a rank is the slice the next layer needs.
    raise NotImplementedError("TODO: implement parallelize_mlp")


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 tp_mlp.py
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    torch.manual_seed(0)
    model = MLPStack(dim=16, hidden=64, n_layers=2)
    reference = MLPStack(dim=16, hidden=64, n_layers=2)
    reference.load_state_dict(model.state_dict())
    parallelize_mlp(model, mesh)
    x = torch.randn(4, 16)
    print(f"rank {dist.get_rank()}: max difference", (model(x) - reference(x)).abs().max().item())
    dist.destroy_process_group()
