"""RIGHT: searches the micro-batch size downward against the bf16 memory rule, trains on a Subset that holds only whole steps, and accumulates through a GradientAccumulationScheduler callback appended to a copy of the caller's callbacks instead of accumulate_grad_batches/limit_train_batches."""

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import GradientAccumulationScheduler
from torch.utils.data import DataLoader, Dataset, Subset


def _micro_batch(effective_batch: int, budget_mb: float, mb_per_sample: float) -> int:
    """The largest divisor of effective_batch whose bf16 activations fit the budget."""
    bf16_mb_per_sample = mb_per_sample / 2
    for size in range(effective_batch, 0, -1):
        if effective_batch % size == 0 and size * bf16_mb_per_sample <= budget_mb:
            return size
    raise ValueError("not even one sample fits the activation budget")


def plan_run(
    train_set: Dataset,
    root_dir: str,
    *,
    effective_batch: int,
    budget_mb: float,
    mb_per_sample: float,
    max_grad_norm: float,
    max_epochs: int,
    callbacks: list[pl.Callback],
) -> tuple[DataLoader, pl.Trainer]:
    micro = _micro_batch(effective_batch, budget_mb, mb_per_sample)
    windows = effective_batch // micro
    whole_steps = len(train_set) // effective_batch
    # a random (but fixed) choice of samples that fills whole optimizer steps exactly
    keep = torch.randperm(len(train_set), generator=torch.Generator().manual_seed(0))[: whole_steps * effective_batch]
    loader = DataLoader(Subset(train_set, keep.tolist()), batch_size=micro, shuffle=True)
    trainer = pl.Trainer(
        accelerator="auto",
        devices=1,
        precision="bf16-mixed",
        gradient_clip_val=max_grad_norm,
        max_epochs=max_epochs,
        callbacks=[*callbacks, GradientAccumulationScheduler(scheduling={0: windows})],
        default_root_dir=root_dir,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    return loader, trainer
