"""RIGHT: enumerates the divisors of effective_batch with integer arithmetic (2 * budget / mb_per_sample samples fit), shuffles through an explicit RandomSampler, and leaves checkpointing on — its files land under root_dir/checkpoints, which the task allows."""

import pytorch_lightning as pl
from torch.utils.data import DataLoader, Dataset, RandomSampler


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
    divisors = [d for d in range(1, effective_batch + 1) if effective_batch % d == 0]
    fitting = [d for d in divisors if d * mb_per_sample <= 2 * budget_mb]  # bf16 halves the activations
    micro = max(fitting)
    k = effective_batch // micro
    full_steps = len(train_set) // (micro * k)
    loader = DataLoader(train_set, batch_size=micro, sampler=RandomSampler(train_set))
    trainer = pl.Trainer(
        precision="bf16-mixed",
        accumulate_grad_batches=k,
        limit_train_batches=full_steps * k,
        gradient_clip_val=float(max_grad_norm),
        gradient_clip_algorithm="norm",
        max_epochs=max_epochs,
        callbacks=list(callbacks),
        default_root_dir=root_dir,
        logger=False,
        enable_checkpointing=True,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    return loader, trainer
