"""Exercise: data parallelism with DDP, and gradient accumulation that communicates once per step.

Every rank holds the whole model and trains on its own part of the batch; DDP averages the
gradients across ranks during backward. With gradient accumulation, a rank's part arrives as
several micro-batches, and only the last backward of a step should communicate.

Run it yourself with two CPU processes:
    torchrun --standalone --nproc-per-node=2 ddp_accum.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

LR = 0.05


class Net(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x)))


def make_ddp(model: nn.Module) -> DDP:
    """Wrap `model` (on the CPU, every rank holding the same weights) for data parallelism."""
    # TODO: return the model wrapped in DistributedDataParallel. The model is on the CPU and
    #       the process group uses gloo: there is no GPU to name.
    raise NotImplementedError("TODO: implement make_ddp")


def train_step(model: DDP, optimizer: torch.optim.Optimizer,
               micro_batches: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """One optimizer step over this rank's micro-batches; returns their mean loss, detached."""
    # TODO: accumulate the gradients of all micro-batches (mean-squared error of model(x)
    #       against y), then take ONE optimizer step and clear the gradients. Return the mean of
    #       the micro-batch losses as a tensor without autograd graph.
    # Watch out: the update must equal one process training on the whole global batch (all
    #       ranks, all micro-batches; they have equal sizes), and the ranks may exchange
    #       gradients only ONCE per step, not once per micro-batch.
    raise NotImplementedError("TODO: implement train_step")


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 ddp_accum.py
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)                          # the same weights on every rank
    model = make_ddp(Net(8, 16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for step in range(3):
        x = torch.randn(world * 12, 8)            # the global batch (same seed everywhere) ...
        y = x[:, :2].sin()
        mine = slice(rank * 12, (rank + 1) * 12)  # ... this rank's part, as 3 micro-batches
        micro = list(zip(x[mine].split(4), y[mine].split(4)))
        loss = train_step(model, optimizer, micro)
        print(f"rank {rank} step {step}: loss {loss.item():.4f}")
    dist.destroy_process_group()
