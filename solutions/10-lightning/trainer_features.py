"""Reference solution: a Trainer configured for clipping, accumulation and bf16 mixed precision."""

import pytorch_lightning as pl
from pytorch_lightning.loggers import CSVLogger


def make_trainer(root_dir: str, *, clip_norm: float, accumulate: int, max_epochs: int,
                 callbacks: list[pl.Callback]) -> pl.Trainer:
    return pl.Trainer(
        accelerator="auto",                  # a GPU when there is one, else the CPU
        devices=1,
        # "16-mixed" is for GPUs; CPUs autocast to bfloat16
        precision="bf16-mixed",  # key
        # clip the global gradient norm ...
        gradient_clip_val=clip_norm,  # key
        gradient_clip_algorithm="norm",      # ... (the default algorithm; "value" clips each entry)
        # one optimizer step per `accumulate` batches
        accumulate_grad_batches=accumulate,  # key
        max_epochs=max_epochs,
        callbacks=callbacks,
        logger=CSVLogger(save_dir=root_dir),
        default_root_dir=root_dir,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
