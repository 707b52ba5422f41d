"""WRONG: clips with gradient_clip_algorithm="value", which clamps each entry and changes the gradient's direction (and lets its norm exceed the cap); the task asks that "the gradient's norm is at most max_grad_norm at every step, with its direction kept"."""

import pytorch_lightning as pl
from torch.utils.data import DataLoader, Dataset


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
    # bf16 autocast stores half the activations of float32, so twice the samples fit the budget
    fits = int(budget_mb // (mb_per_sample / 2))
    # the micro-batch must divide the effective batch: every step then adds up the same whole batches
    micro = max(b for b in range(1, min(fits, effective_batch) + 1) if effective_batch % b == 0)
    accumulate = effective_batch // micro
    # Lightning divides every loss by `accumulate`, so a short last window would count for less:
    # run only the batches that fill whole optimizer steps
    steps_per_epoch = len(train_set) // effective_batch
    loader = DataLoader(train_set, batch_size=micro, shuffle=True)
    trainer = pl.Trainer(
        accelerator="auto",
        devices=1,
        precision="bf16-mixed",
        accumulate_grad_batches=accumulate,
        limit_train_batches=steps_per_epoch * accumulate,
        gradient_clip_val=max_grad_norm,
        gradient_clip_algorithm="value",
        max_epochs=max_epochs,
        callbacks=callbacks,
        default_root_dir=root_dir,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    return loader, trainer
