"""Exercise: plan a training run that meets an effective batch size within an activation-memory
budget, and hand back the DataLoader and the pl.Trainer that carry it out."""

import pytorch_lightning as pl
from torch.utils.data import DataLoader, Dataset


def plan_run(train_set: Dataset, root_dir: str, *, effective_batch: int, budget_mb: float,
             mb_per_sample: float, max_grad_norm: float, max_epochs: int,
             callbacks: list[pl.Callback]) -> tuple[DataLoader, pl.Trainer]:
    # TODO: return (loader, trainer): a shuffling DataLoader over `train_set` and a pl.Trainer
    # whose fit of any model on that loader keeps to this plan:
    #   - every optimizer step averages the gradient over exactly `effective_batch` samples,
    #     the last step of each epoch included, and each epoch makes as many such steps as the
    #     data fills;
    #   - one micro-batch's activations fit in `budget_mb`: they take `mb_per_sample` MB per
    #     sample in float32 and half of that under bfloat16 autocast; the weights stay float32;
    #   - within those rules, as few micro-batches per optimizer step as possible (each one is a
    #     forward and a backward: fewer, larger ones make the same step faster);
    #   - the gradient's norm is at most `max_grad_norm` at every step, its direction kept;
    #   - `max_epochs` epochs, the given `callbacks`, every file under `root_dir`, no progress
    #     bar and no model summary.
    # Watch out: how Lightning weights the batches of a window that the end of an epoch cuts short.
    raise NotImplementedError("TODO: implement plan_run")
