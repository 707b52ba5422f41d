"""WRONG: setup builds the datasets only when stage is "fit" (or None), so trainer.validate(datamodule=dm) or setup("validate") leaves val_set empty; the guide says setup runs for "fit", "validate", "test" or "predict" and must build the datasets there."""

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
        if stage not in (None, "fit"):
            return
        h = self.hparams
        x, y = make_blobs(h.n, h.features, h.classes, h.seed)
        n_val = round(h.n * h.val_fraction)
        # same seed -> same split, every time
        split = torch.Generator().manual_seed(h.seed)
        self.train_set, self.val_set = random_split(TensorDataset(x, y), [h.n - n_val, n_val], generator=split)

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.train_set, batch_size=self.hparams.batch_size, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.val_set, batch_size=self.hparams.batch_size)


def make_callbacks(dirpath: str, patience: int, top_k: int) -> list[pl.Callback]:
    """Stop when val_loss has not improved for `patience` epochs; keep the `top_k` best checkpoints."""
    return [
        EarlyStopping(monitor="val_loss", mode="min", patience=patience),
        ModelCheckpoint(
            dirpath=dirpath, monitor="val_loss", mode="min", save_top_k=top_k, filename="{epoch}-{val_loss:.4f}"
        ),
    ]
