"""Check: the DataModule splits reproducibly and completely, shuffles only the training data;
EarlyStopping stops a run whose val_loss stopped improving exactly `patience` epochs after its
best; ModelCheckpoint keeps exactly the `top_k` best checkpoint files."""

import os
import random

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint

from _common import quiet_lightning


def _samples(loader):
    xs, ys = zip(*[(x, y) for x, y in loader])
    return torch.cat(xs), torch.cat(ys)


def _rows(x):
    return sorted(tuple(r) for r in x.tolist())


class _Scripted(pl.LightningModule):
    """Trains a tiny classifier on the learner's data, but reports a scripted val_loss per epoch."""

    def __init__(self, features, classes, script):
        super().__init__()
        self.layer = nn.Linear(features, classes)
        self.script = script
        self.epochs_validated = 0

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        pass

    def on_validation_epoch_end(self):
        self.log("val_loss", self.script[self.current_epoch])
        self.epochs_validated += 1

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def _script(ctx, patience, max_epochs):
    """val_loss per epoch: improves, stalls for patience-1 epochs, improves once more, then only
    gets worse. All values distinct. Returns (values, epoch at which the run must stop).
    The last improvement is tiny (0.0003-0.0008): any improvement resets the counter (the default
    min_delta=0); min_delta=0.001 or 0.01 would not count it and stop patience epochs early. Still
    more than 0.0001, so checkpoint names with val_loss to 4 decimals stay distinct."""
    def u(lo: float, hi: float) -> float:
        return lo + (hi - lo) * torch.rand(1, generator=ctx.generator).item()

    values, best = [], 2.0
    for _ in range(int(ctx.choice([3, 4, 5]))):
        best *= u(0.75, 0.95)
        values.append(best)
    for _ in range(patience - 1):
        values.append(best + u(0.01, 0.3))
    best -= u(0.0003, 0.0008)
    values.append(best)
    best_epoch = len(values) - 1
    while len(values) < max_epochs:
        values.append(best + u(0.01, 0.3))
    return values, best_epoch + patience


def check(ctx):
    quiet_lightning(".*Checkpoint directory.*exists and is not empty.*")
    mine = ctx.learner
    # n * val_fraction always has a fractional part above one half: round() and a floor (what
    # random_split does with fractions) disagree, so the size rule is really tested
    n, val_fraction = ctx.choice([(397, 0.15), (419, 0.15), (503, 0.2), (431, 0.25)])
    features, classes = ctx.choice([(6, 3), (8, 4)])
    batch_size = ctx.choice([32, 50])
    seed = int(ctx.randint(0, 10_000, (1,)))
    kwargs = dict(n=n, features=features, classes=classes, val_fraction=val_fraction,
                  batch_size=batch_size, seed=seed)

    ctx.phase(ctx.t("checking the DataModule"))
    # the caller's global random streams, moved somewhere only this run's seed decides
    torch.manual_seed(int(ctx.randint(0, 2**31 - 1, (1,))))
    random.seed(int(ctx.randint(0, 2**31 - 1, (1,))))
    np.random.seed(int(ctx.randint(0, 2**31 - 1, (1,))))
    torch.rand(int(ctx.randint(1, 50, (1,))))
    streams = (torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy())
    dm = mine.BlobsDataModule(**kwargs)
    ctx.expect(isinstance(dm, pl.LightningDataModule), ctx.t("BlobsDataModule must subclass pl.LightningDataModule"))
    dm.prepare_data()
    dm.setup("fit")
    touched = [name for name, same in (
        ("torch", torch.equal(streams[0], torch.get_rng_state())),
        ("random", streams[1] == random.getstate()),
        ("numpy", bool(np.array_equal(streams[2], np.random.get_state()[1]))),
    ) if not same]
    ctx.expect(not touched,
               ctx.t("building the DataModule and its setup('fit') reseeded or drew from the global random "
                     "generator(s) of {names}: that rewinds the caller's random stream. Seed only a generator "
                     "of your own (random_split(..., generator=torch.Generator().manual_seed(seed)))",
                     names=", ".join(touched)))
    x_all, _ = ctx.reference.make_blobs(n, features, classes, seed)
    x_val, y_val = _samples(dm.val_dataloader())
    x_val2, _ = _samples(dm.val_dataloader())
    x_tr, y_tr = _samples(dm.train_dataloader())
    x_tr2, _ = _samples(dm.train_dataloader())
    n_val = round(n * val_fraction)
    ctx.expect(len(x_val) == n_val,
               ctx.t("the validation loader yields {got} samples, expected round({n} * {fraction}) = {want}",
                     got=len(x_val), n=n, fraction=val_fraction, want=n_val))
    ctx.expect(len(x_tr) == n - n_val,
               ctx.t("the training loader yields {got} samples, expected {n} - {n_val} = {want} (every sample "
                     "not in validation; drop_last would lose some)", got=len(x_tr), n=n, n_val=n_val,
                     want=n - n_val))
    ctx.expect(_rows(torch.cat([x_tr, x_val])) == _rows(x_all),
               ctx.t("training and validation sets together must be exactly the data from make_blobs: "
                     "every sample once, none in both"))
    first = next(iter(dm.train_dataloader()))[0]
    ctx.expect(len(first) == batch_size,
               ctx.t("the first training batch has {got} samples, expected batch_size={want}",
                     got=len(first), want=batch_size))
    ctx.expect(torch.equal(x_val, x_val2),
               ctx.t("val_dataloader returns the samples in a different order each time: do not "
                     "shuffle validation data"))
    ctx.expect(not torch.equal(x_tr, x_tr2),
               ctx.t("train_dataloader returns the same order every epoch: shuffle=True"))
    dm2 = mine.BlobsDataModule(**kwargs)
    dm2.setup("fit")
    ctx.expect(torch.equal(_samples(dm2.val_dataloader())[0], x_val),
               ctx.t("two data modules with the same seed made different splits: pass random_split a "
                     "torch.Generator seeded from the seed"))
    # setup runs for every stage: trainer.validate(datamodule=dm) calls setup("validate") only
    dm3 = mine.BlobsDataModule(**kwargs)
    dm3.setup("validate")
    try:
        problem = "" if torch.equal(_samples(dm3.val_dataloader())[0], x_val) else ctx.t("a different validation set")
    except Exception as exc:
        problem = f"{type(exc).__name__}: {str(exc).strip()[:120]}"
    ctx.expect(not problem,
               ctx.t("after setup(\"validate\") (what trainer.validate(datamodule=dm) calls) val_dataloader() "
                     "gave {problem}: setup is called with the stage of the run (\"fit\", \"validate\", "
                     "\"test\" or \"predict\"), so build the datasets whatever the stage", problem=problem))

    patience = int(ctx.choice([2, 3, 4]))
    top_k = int(ctx.choice([2, 3]))
    max_epochs = 16
    script, stop_epoch = _script(ctx, patience, max_epochs)
    dirpath = ctx.tmpdir / "kept"  # not the Trainer's default checkpoint folder
    callbacks = mine.make_callbacks(str(dirpath), patience=patience, top_k=top_k)
    stoppers = [c for c in callbacks if isinstance(c, EarlyStopping)]
    keepers = [c for c in callbacks if isinstance(c, ModelCheckpoint)]
    ctx.expect(len(stoppers) == 1 and len(keepers) == 1,
               ctx.t("make_callbacks must return one EarlyStopping and one ModelCheckpoint"))

    ctx.phase(ctx.t("a run whose val_loss stops improving (patience={patience}, top_k={top_k})",
                    patience=patience, top_k=top_k))
    pl.seed_everything(ctx.seed, verbose=False)
    module = _Scripted(features, classes, script)
    trainer = pl.Trainer(max_epochs=max_epochs, accelerator="cpu", devices=1, callbacks=callbacks,
                         logger=False, default_root_dir=ctx.tmpdir, enable_progress_bar=False,
                         enable_model_summary=False, num_sanity_val_steps=0,
                         limit_train_batches=2, limit_val_batches=1)
    try:
        trainer.fit(module, datamodule=mine.BlobsDataModule(**kwargs))
    except Exception as exc:  # e.g. a callback that monitors a metric this run never logs
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        ctx.fail(ctx.t("fitting with your callbacks raised {error}: {text}", error=type(exc).__name__, text=text),
                 [ctx.t("the model logs only `val_loss`: both callbacks must monitor \"val_loss\"")])
    for c in callbacks:
        monitor = getattr(c, "monitor", None)
        ctx.expect(monitor == "val_loss",
                   ctx.t("{callback} monitors {monitor!r}: both callbacks must watch \"val_loss\"",
                         callback=type(c).__name__, monitor=monitor))

    ran = module.epochs_validated
    ctx.figure("epochs", {"ran": ran, "expected": stop_epoch + 1, "max_epochs": max_epochs},
               label=ctx.t("epochs run: {ran}, where early stopping should end the run after {expected} (max_epochs="
                           "{max_epochs})", ran=ran, expected=stop_epoch + 1, max_epochs=max_epochs))
    best = min(range(stop_epoch + 1), key=lambda e: script[e])
    shown = ", ".join(f"{v:.4f}" for v in script[:min(max(ran, stop_epoch + 1) + 1, max_epochs)])
    ctx.expect(ran == stop_epoch + 1,
               ctx.t("the run stopped after {ran} epochs, expected {want}: val_loss per epoch was [{shown}, ...]; "
                     "its best was epoch {best}, and patience={patience} allows {patience} epochs without "
                     "improvement after it (lower val_loss is better; an improvement counts however small, "
                     "as with the default min_delta=0)",
                     ran=ran, want=stop_epoch + 1, shown=shown, best=best + 1, patience=patience))

    files = sorted(f for f in os.listdir(dirpath) if f.endswith(".ckpt")) if dirpath.is_dir() else []
    expected_scores = sorted(script[:stop_epoch + 1])[:top_k]  # the run's length was checked above
    kept = sorted(float(v) for v in keepers[0].best_k_models.values())
    ctx.figure("checkpoints", {"files": len(files), "top_k": top_k},
               label=ctx.t("checkpoint files kept: {files} (save_top_k={top_k})", files=len(files), top_k=top_k))
    ctx.expect(bool(files) or not keepers[0].best_k_models,
               ctx.t("no checkpoint file in the directory make_callbacks was given ({folder}/), but "
                     "ModelCheckpoint saved {n} elsewhere: pass dirpath=dirpath",
                     folder=dirpath.name, n=len(keepers[0].best_k_models)))
    ctx.expect(len(files) == top_k,
               ctx.t("{n} checkpoint files in the directory, expected the {top_k} best (save_top_k={top_k}, "
                     "monitoring val_loss)", n=len(files), top_k=top_k))
    ctx.expect_close("val_loss of the kept checkpoints (the lowest ones)", torch.tensor(kept),
                     torch.tensor(expected_scores), atol=1e-6, rtol=1e-6)
    ctx.expect(abs(float(keepers[0].best_model_score) - min(script[:stop_epoch + 1])) < 1e-6,
               ctx.t("best_model_path does not point at the epoch with the lowest val_loss (mode='min')"))
