"""Exercise: 2-D parallelism, tensor parallel inside FSDP, on a ("dp", "tp") device mesh.

Ranks in one row of the mesh (the "tp" dimension) split every block's matrices; ranks in one
column (the "dp" dimension) shard what is left with FSDP and train on different data.

Run it yourself with two CPU processes:
    torchrun --standalone --nproc-per-node=2 tp_fsdp_2d.py
"""

import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

LR = 0.05


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, dim: int, hidden: int, n_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(dim, hidden) for _ in range(n_layers))
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def parallelize_2d(model: Net, mesh: DeviceMesh) -> Net:
    """Tensor parallel over mesh["tp"] inside every block, then FSDP over mesh["dp"]."""
    # TODO: in every block, split fc1 by its output features and fc2 by its input features over
    #       the "tp" dimension of the mesh; then shard every block, and the model, with FSDP2
    #       over the "dp" dimension. Return the model.
    # Watch out: which sub-mesh each step uses, and the order of the two steps.
    raise NotImplementedError("TODO: implement parallelize_2d")


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 tp_fsdp_2d.py
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (1, dist.get_world_size()), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    model = parallelize_2d(Net(dim=8, hidden=16, n_layers=2), mesh)
    w = model.layers[0].fc1.weight
    print(f"rank {dist.get_rank()}: fc1.weight {tuple(w.shape)} placed {w.placements}, local {tuple(w.to_local().shape)}")
    dist.destroy_process_group()
