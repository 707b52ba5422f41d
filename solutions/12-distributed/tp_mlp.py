"""Reference solution: a tensor-parallel attention block (fused qkv, RMSNorm) within a budget of
two all-reduces per block."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def parallelize_blocks(model: Net, mesh: DeviceMesh) -> Net:
    """Shard every block over the 1-D `mesh`: 1/mesh.size() of each projection per rank, the
    same outputs as the unsharded model, at most two all-reduces per block each way."""
    tp = mesh.size()
    for block in model.layers:
        attn = block.attn
        # Shard(0) gives rank r rows r*3d/tp... of the fused weight; reorder the rows to
        # [q_0 k_0 v_0 | q_1 k_1 v_1 | ...] so that those rows are its own q, k and v slices
        # and chunk(3) of its local output still splits q from k from v (one module, so one
        # all-reduce of the input's gradient instead of three)
        w = attn.qkv.weight
        with torch.no_grad():
            w.copy_(w.view(3, tp, -1, w.shape[1]).transpose(0, 1).reshape_as(w))  # key
        attn.n_heads //= tp  # key: the heads of this rank's slice
        plan = {
            "attn.qkv": ColwiseParallel(),  # key
            "attn.proj": RowwiseParallel(),  # key
            "mlp.fc1": ColwiseParallel(),  # key
            "mlp.fc2": RowwiseParallel(),  # key
        }
        parallelize_module(block, mesh, plan)
    return model
