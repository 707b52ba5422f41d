"""Exercise: configure a Trainer for gradient clipping, gradient accumulation and bf16 mixed
precision, that runs quietly and keeps every file under `root_dir`."""

import pytorch_lightning as pl
from pytorch_lightning.loggers import CSVLogger


def make_trainer(root_dir: str, *, clip_norm: float, accumulate: int, max_epochs: int,
                 callbacks: list[pl.Callback]) -> pl.Trainer:
    # TODO: return a pl.Trainer that
    #   - picks the accelerator by itself, on 1 device, with bfloat16 mixed precision
    #   - clips the gradient norm to `clip_norm`
    #   - makes one optimizer step per `accumulate` batches
    #   - trains for `max_epochs` epochs and runs the given `callbacks`
    #   - logs with a CSVLogger under `root_dir` and uses `root_dir` as its default_root_dir
    #   - shows no progress bar and no model summary
    # Watch out: this runs on a CPU, where only one of Lightning's mixed-precision modes is real;
    # and clipping "the gradient norm" is not the same as clipping each gradient value.
    raise NotImplementedError("TODO: implement make_trainer")
