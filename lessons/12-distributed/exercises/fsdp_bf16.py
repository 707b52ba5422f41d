"""Exercise: FSDP2 with a bfloat16 mixed-precision policy.

The same Net as in the FSDP2 exercise, sharded so that matrix multiplies run in bfloat16 while
the sharded parameters stay float32 and gradients are averaged in float32.

Run it yourself with two processes (on two GPUs with nccl when there are two, else on the CPU
with gloo):
    torchrun --standalone --nproc-per-node=2 fsdp_bf16.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, in_features: int, dim: int, n_layers: int, out_features: int) -> None:
        super().__init__()
        self.inp = nn.Linear(in_features, dim)
        self.layers = nn.ModuleList(Block(dim) for _ in range(n_layers))
        self.head = nn.Linear(dim, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def shard_bf16(model: Net, mesh: DeviceMesh) -> None:
    """Shard `model` in place so that forward and backward compute in bfloat16, the sharded
    parameters (what the optimizer updates) stay float32, and gradients are reduced in float32."""
    # TODO: shard every block and the root, as in the previous exercise, but so that forward
    #       and backward compute with bfloat16 parameters while the shards stay float32.
    # Watch out: averaging gradients across ranks in bfloat16 loses precision (ask for float32
    #       there), and any unit sharded without the policy computes in float32.
    raise NotImplementedError("TODO: implement shard_bf16")


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 fsdp_bf16.py
    import os

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    world = int(os.environ["WORLD_SIZE"])
    if torch.cuda.device_count() >= world:             # one GPU per process: nccl
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))   # this node's GPU, not the global rank
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:                                               # CPU processes: gloo
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    mesh = init_device_mesh(device.type, (world,))
    torch.manual_seed(0)
    model = Net(in_features=8, dim=64, n_layers=2, out_features=4).to(device)
    shard_bf16(model, mesh)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(16, 8, device=device)
    loss = F.mse_loss(model(x).float(), x[:, :4].sin())
    loss.backward()
    optimizer.step()
    print(f"rank {dist.get_rank()}: loss {loss.item():.4f}, "
          f"sharded weight dtype {model.layers[0].fc1.weight.dtype}")
    dist.destroy_process_group()
