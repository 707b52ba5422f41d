"""Exercise: a LightningDataModule, and the callbacks that stop and checkpoint a run."""

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset, random_split


def make_blobs(n: int, features: int, classes: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n points around `classes` random centres, and their labels (same seed, same data)."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, features, generator=g) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    return centers[y] + torch.randn(n, features, generator=g), y


class BlobsDataModule(pl.LightningDataModule):
    def __init__(self, n: int = 1000, features: int = 8, classes: int = 4, val_fraction: float = 0.2,
                 batch_size: int = 64, seed: int = 0) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.train_set = None
        self.val_set = None

    def setup(self, stage: str | None = None) -> None:
        # TODO: the data from make_blobs, built from the hyperparameters, split into a training
        #       set and a validation set of round(n * val_fraction) samples.
        #       Watch out: the same seed must always give the same split, whatever else the
        #       program has drawn from the global random generators.
        raise NotImplementedError("TODO: implement setup")

    def train_dataloader(self) -> DataLoader:
        # TODO: the training batches (batch_size from hparams): a new order every epoch, and
        #       every training sample used in each epoch.
        raise NotImplementedError("TODO: implement train_dataloader")

    def val_dataloader(self) -> DataLoader:
        # TODO: a DataLoader over the validation set, in the same order every time
        raise NotImplementedError("TODO: implement val_dataloader")


def make_callbacks(dirpath: str, patience: int, top_k: int) -> list[pl.Callback]:
    """Stop when val_loss has not improved for `patience` epochs; keep the `top_k` best checkpoints."""
    # TODO: one callback that stops the run, one that keeps the checkpoints, both judging the
    #       logged "val_loss". Watch out: for a loss, lower is better, and every argument of this
    #       function must reach the callback it is meant for.
    raise NotImplementedError("TODO: implement make_callbacks")
