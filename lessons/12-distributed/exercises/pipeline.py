"""Exercise: pipeline parallelism with torch.distributed.pipelining.

The model is cut into consecutive stages, one per rank. A schedule splits the batch into
micro-batches and streams them through the stages, so that the ranks work at the same time on
different micro-batches.

Run it yourself with two CPU processes:
    torchrun --standalone --nproc-per-node=2 pipeline.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe


class Block(nn.Module):
    """Residual tanh MLP block."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.tanh(self.fc(x))


class Net(nn.Module):
    def __init__(self, dim: int, n_layers: int, out_features: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block(dim) for _ in range(n_layers))
        self.head = nn.Linear(dim, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def build_pipeline(model: Net, rank: int, world: int, n_microbatches: int):
    """This rank's stage of `model` (its own layers, not copies) and a schedule that trains it
    with the MSE loss on `n_microbatches` micro-batches. Returns (stage_module, schedule)."""
    # TODO: cut the model into `world` consecutive stages: the blocks of model.layers split
    #       evenly in order, the head with the last stage. Keep this rank's part as a module
    #       made of the model's own layers, wrap it as a pipeline stage, and build a GPipe (or
    #       1F1B) schedule for it. Return (stage_module, schedule).
    # Watch out: every layer belongs to exactly one stage, the loss is the mean-squared error
    #       of each micro-batch, and the gradients must come out as one process's gradient of
    #       the whole batch.
    raise NotImplementedError("TODO: implement build_pipeline")


if __name__ == "__main__":
    # torchrun --standalone --nproc-per-node=2 pipeline.py
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)                          # the same model on every rank
    model = Net(dim=8, n_layers=4, out_features=2)
    stage_module, schedule = build_pipeline(model, rank, world, n_microbatches=4)
    x, y = torch.randn(16, 8), torch.randn(16, 2)
    losses = []
    if rank == 0:
        schedule.step(x)                          # the first stage feeds the inputs ...
    elif rank == world - 1:
        schedule.step(target=y, losses=losses)    # ... the last one computes the loss
        print(f"rank {rank}: micro-batch losses {[round(loss.item(), 4) for loss in losses]}")
    else:
        schedule.step()                           # stages in between pass activations on
    dist.destroy_process_group()
