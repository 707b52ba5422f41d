"""WRONG: shards attn and mlp of every block as separate FSDP units (finer-grained gathering) and then the model, instead of each block: training is exact, but the blocks are not FSDP units and their RMSNorm weights fall into the root's unit; breaks 'every block, and then the model, is an FSDP unit over mesh["dp"]'."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

LR = 0.05


class Attention(nn.Module):
    """Causal self-attention with one fused projection whose output is [q | k | v]."""

    def __init__(self, dim: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.n_heads, -1).transpose(1, 2) for z in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, bias=False)
        self.fc2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """Pre-norm transformer block: attention, then MLP, each around an RMSNorm and a residual."""

    def __init__(self, dim: int, n_heads: int, hidden: int) -> None:
        super().__init__()
        self.attn_norm = nn.RMSNorm(dim)
        self.attn = Attention(dim, n_heads)
        self.mlp_norm = nn.RMSNorm(dim)
        self.mlp = MLP(dim, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class Net(nn.Module):
    def __init__(self, dim: int, n_heads: int, hidden: int, n_layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(dim, n_heads, hidden) for _ in range(n_layers))
        self.head = nn.Linear(dim, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def parallelize_2d(model: Net, mesh: DeviceMesh) -> Net:
    """Tensor parallel over mesh["tp"] inside every block, then FSDP over mesh["dp"]."""
    tp_mesh, dp_mesh = mesh["tp"], mesh["dp"]
    tp = tp_mesh.size()
    for block in model.layers:
        w = block.attn.qkv.weight
        with torch.no_grad():
            w.copy_(w.view(3, tp, -1, w.shape[1]).transpose(0, 1).reshape_as(w))
        block.attn.n_heads //= tp
        parallelize_module(block, tp_mesh, {
            "attn.qkv": ColwiseParallel(),
            "attn.proj": RowwiseParallel(),
            "mlp.fc1": ColwiseParallel(),
            "mlp.fc2": RowwiseParallel(),
        })
        # one unit per tensor-parallel region: gathered and freed alone
        fully_shard(block.attn, mesh=dp_mesh)
        fully_shard(block.mlp, mesh=dp_mesh)
    fully_shard(model, mesh=dp_mesh)
    return model


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 tp_fsdp_2d.py
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    dist.init_process_group("gloo")
    world = dist.get_world_size()
    mesh = init_device_mesh("cpu", (1, world), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    model = parallelize_2d(Net(dim=4 * world, n_heads=2 * world, hidden=8 * world, n_layers=2), mesh)
    for name, p in model.named_parameters():
        print(f"rank {dist.get_rank()}: {name} {tuple(p.shape)} placed {p.placements}, local {tuple(p.to_local().shape)}")
    dist.destroy_process_group()
