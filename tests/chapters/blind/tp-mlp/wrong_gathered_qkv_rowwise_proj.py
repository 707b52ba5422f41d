"""WRONG: all-gathers qkv's column-wise output (output_layouts=Replicate()) so chunk(3) and the global head count stay valid, then gives proj RowwiseParallel(input_layouts=Replicate()): exact and fully sharded, but the gather adds half an all-reduce each way on top of proj's and fc2's (2.5 per block forward, 2.5 backward); breaks 'one forward pass of the whole model runs at most 2 all-reduces per block, and so does one backward pass'."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import Replicate
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
    """Make every block of `model` tensor parallel over `mesh`, in place, and return the model."""
    for block in model.layers:
        plan = {
            "attn.qkv": ColwiseParallel(output_layouts=Replicate()),
            "attn.proj": RowwiseParallel(input_layouts=Replicate()),
            "mlp.fc1": ColwiseParallel(),
            "mlp.fc2": RowwiseParallel(),
        }
        parallelize_module(block, mesh, plan)
    return model


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 tp_mlp.py
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.debug import CommDebugMode

    dist.init_process_group("gloo")
    world = dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = Net(dim=8 * world, n_heads=2 * world, hidden=16 * world, n_layers=2)
    reference = Net(dim=8 * world, n_heads=2 * world, hidden=16 * world, n_layers=2)
    reference.load_state_dict(model.state_dict())
    parallelize_blocks(model, mesh)
    x = torch.randn(2, 4 * world, 8 * world, requires_grad=True)
    with CommDebugMode() as forward:
        out = model(x)
    with CommDebugMode() as backward:
        out.sum().backward()
    if dist.get_rank() == 0:
        print("max difference", (out - reference(x)).abs().max().item())
        print("forward", dict(forward.get_comm_counts()), "backward", dict(backward.get_comm_counts()))
    dist.destroy_process_group()
