"""RIGHT: splits with its own seeded torch.randperm and Subset (exactly the permutation random_split draws), builds the data once and reuses it on later setup calls, gives the validation loader a larger batch, and returns the callbacks checkpoint-first with explicit strict/verbose flags."""

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint
from torch.utils.data import DataLoader, Subset, TensorDataset, random_split  # noqa: F401


def make_blobs(n: int, features: int, classes: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n points around `classes` random centres, and their labels (same seed, same data)."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, features, generator=g) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    return centers[y] + torch.randn(n, features, generator=g), y


class BlobsDataModule(pl.LightningDataModule):
    def __init__(
        self,
        n: int = 1000,
        features: int = 8,
        classes: int = 4,
        val_fraction: float = 0.2,
        batch_size: int = 64,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.train_set = None
        self.val_set = None

    def setup(self, stage: str | None = None) -> None:
        if self.train_set is not None and self.val_set is not None:
            return  # already built; the split would come out the same anyway
        hp = self.hparams
        data = TensorDataset(*make_blobs(hp.n, hp.features, hp.classes, hp.seed))
        n_val = int(round(hp.n * hp.val_fraction))
        order = torch.randperm(hp.n, generator=torch.Generator().manual_seed(hp.seed)).tolist()
        self.train_set = Subset(data, order[: hp.n - n_val])
        self.val_set = Subset(data, order[hp.n - n_val :])

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.train_set, batch_size=self.hparams.batch_size, shuffle=True, drop_last=False)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.val_set, batch_size=2 * self.hparams.batch_size, shuffle=False)


def make_callbacks(dirpath: str, patience: int, top_k: int) -> list[pl.Callback]:
    """Stop when val_loss has not improved for `patience` epochs; keep the `top_k` best checkpoints."""
    keep = ModelCheckpoint(
        dirpath=dirpath,
        filename="best-{epoch:02d}",
        monitor="val_loss",
        mode="min",
        save_top_k=top_k,
        save_last=False,
        auto_insert_metric_name=True,
    )
    stop = EarlyStopping(monitor="val_loss", mode="min", patience=patience, min_delta=0.0, strict=True, verbose=False)
    return [keep, stop]
