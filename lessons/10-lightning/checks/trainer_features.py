"""Check: the learner's Trainer clips the gradient norm, accumulates the asked number of batches
per optimizer step, trains under bf16 autocast, runs the checker's callback, logs to CSV under
root_dir and stays quiet. Verified on a real fit with a probe callback."""

import os
import warnings

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch_lightning.callbacks import ModelSummary
from pytorch_lightning.loggers import CSVLogger
from torch.utils.data import DataLoader, TensorDataset

from _common import quiet_lightning


def _grad_norm(module):
    grads = [p.grad.detach().float() for p in module.parameters() if p.grad is not None]
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()


class _Probe(pl.LightningModule):
    """A regression model with large gradients (so that clipping matters); records the
    autocast state of every training step."""

    def __init__(self, features):
        super().__init__()
        self.layer = nn.Linear(features, 3)
        self.autocast = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self.layer(x)
        self.autocast.append(out.dtype)
        loss = 50 * F.mse_loss(out.float(), y)
        self.log("train_loss", loss, on_step=True, on_epoch=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-4)


class _StepProbe(pl.Callback):
    """Counts batches per optimizer step and measures the gradient norm before and after clipping."""

    def __init__(self):
        self.batches = 0
        self.per_step = []
        self.before = []
        self.after = []
        self.last_step = 0

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self.batches += 1

    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        self.per_step.append(self.batches)    # called before clipping, once per optimizer step
        self.batches = 0
        self.before.append(_grad_norm(pl_module))

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step != self.last_step:    # an optimizer step just ran: grads are clipped
            self.last_step = trainer.global_step
            self.after.append(_grad_norm(pl_module))


def check(ctx):
    quiet_lightning()
    clip = float(ctx.choice([0.5, 1.0, 2.0]))
    accumulate = int(ctx.choice([2, 3, 4]))
    batches = int(ctx.choice([7, 10, 11]))
    max_epochs = 2
    features = 6
    root = ctx.tmpdir / "run"
    root.mkdir()

    probe = _StepProbe()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = ctx.learner.make_trainer(str(root), clip_norm=clip, accumulate=accumulate,
                                           max_epochs=max_epochs, callbacks=[probe])
    for w in caught:
        ctx.expect("fp16 is not supported on CPU" not in str(w.message),
                   "you asked for precision='16-mixed' on a CPU: Lightning's float16 AMP (with its "
                   "GradScaler) is for GPUs, so it fell back to 'bf16-mixed' with a warning. Ask "
                   "for 'bf16-mixed' yourself")
    ctx.expect(isinstance(trainer, pl.Trainer), "make_trainer must return a pl.Trainer")
    ctx.expect(os.path.realpath(trainer.default_root_dir) == os.path.realpath(root),
               f"default_root_dir is {trainer.default_root_dir}, expected root_dir ({root}): "
               "checkpoints and logs must stay under it")
    ctx.expect(trainer.progress_bar_callback is None,
               "the progress bar is on: enable_progress_bar=False keeps logs and this checker quiet")
    ctx.expect(not any(isinstance(c, ModelSummary) for c in trainer.callbacks),
               "the model summary is on: enable_model_summary=False")
    ctx.expect(isinstance(trainer.logger, CSVLogger),
               f"the logger is {type(trainer.logger).__name__}, expected a CSVLogger")
    ctx.expect(os.path.realpath(trainer.logger.save_dir).startswith(os.path.realpath(root)),
               f"the CSVLogger writes to {trainer.logger.save_dir}, expected a folder under root_dir")
    ctx.expect_equal("trainer.max_epochs", trainer.max_epochs, max_epochs)
    # accumulation is judged by what the fit does, not by trainer.accumulate_grad_batches: a
    # GradientAccumulationScheduler callback only sets that attribute once fit starts
    ctx.expect_equal("trainer.gradient_clip_val", trainer.gradient_clip_val, clip)
    algorithm = str(getattr(trainer.gradient_clip_algorithm, "value", trainer.gradient_clip_algorithm))
    ctx.expect(algorithm in ("norm", "None"),
               f"gradient_clip_algorithm is {algorithm!r}: clip the gradient norm ('norm'), not each value")
    ctx.expect(trainer.precision == "bf16-mixed",
               f"trainer.precision is {trainer.precision!r}, expected 'bf16-mixed' "
               "(float16 autocast with a GradScaler is for GPUs; CPUs use bfloat16)")

    x = ctx.randn(batches * 8, features) * 4
    y = ctx.randn(batches * 8, 3) * 4
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    torch.manual_seed(ctx.seed)
    model = _Probe(features)
    ctx.phase(f"training with clip_norm={clip}, accumulate={accumulate}")
    trainer.fit(model, loader)

    ctx.expect(bool(probe.per_step) or probe.batches > 0,
               "the callback passed to make_trainer never ran: pass callbacks=callbacks to the Trainer")
    per_epoch = [accumulate] * (batches // accumulate) + ([batches % accumulate] if batches % accumulate else [])
    ctx.figure("optimizer_steps", {"made": len(probe.per_step), "expected": len(per_epoch) * max_epochs})
    want = per_epoch * max_epochs
    made = probe.per_step
    if made != want:
        epochs_run = len(made) // len(per_epoch)
        if made and made == per_epoch * epochs_run:
            why = (f"each epoch's windows are right, but {epochs_run} epochs ran: train for "
                   f"max_epochs={max_epochs}")
        else:
            why = (f"the first step came after {made[0] if made else 0} batch(es): make one "
                   f"optimizer step per accumulate={accumulate} batches")
        ctx.fail(f"over {max_epochs} epochs of {batches} batches, the optimizer stepped after "
                 f"{made[:8]}{' ...' if len(made) > 8 else ''} batches, expected {want[:8]}"
                 f"{' ...' if len(want) > 8 else ''}: {why}")
    ctx.expect(all(d == torch.bfloat16 for d in model.autocast),
               f"training_step computed in {model.autocast[0] if model.autocast else '?'}: "
               "precision='bf16-mixed' runs forward under bfloat16 autocast")
    expected_after = [min(b, clip) for b in probe.before]
    ctx.figure("grad_norm", {"max_before_clipping": max(probe.before), "max_after": max(probe.after),
                             "clip_norm": clip})
    # A fact about this run (the expected norms come from the same run's gradients).
    off = [(i, a, e) for i, (a, e) in enumerate(zip(probe.after, expected_after))
           if abs(a - e) > 1e-4 + 1e-3 * e]
    if len(probe.after) != len(expected_after) or off:
        i, a, e = off[0] if off else (0, 0.0, 0.0)
        ctx.fail(f"at optimizer step {i + 1} the gradient norm after clipping was {a:.4g}, expected "
                 f"min(norm before clipping = {probe.before[i]:.4g}, clip_norm = {clip}) = {e:.4g}: "
                 f"clip the global gradient norm to clip_norm (gradient_clip_val with the 'norm' "
                 f"algorithm)")

    metrics = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f == "metrics.csv"]
    ctx.expect(bool(metrics), "no metrics.csv under root_dir: log with CSVLogger(save_dir=root_dir)")
    with open(metrics[0], encoding="utf-8") as f:
        ctx.expect("train_loss" in f.readline(), "metrics.csv has no train_loss column")
