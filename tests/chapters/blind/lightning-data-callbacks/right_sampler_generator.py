"""RIGHT: draws the split indices with random_split on a range of indices under a per-module generator and indexes the tensors directly (TensorDataset per split), and shuffles training through an explicit RandomSampler instead of shuffle=True."""

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset, random_split


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
        n = self.hparams.n
        x, y = make_blobs(n, self.hparams.features, self.hparams.classes, self.hparams.seed)
        n_val = round(n * self.hparams.val_fraction)
        split_rng = torch.Generator()
        split_rng.manual_seed(self.hparams.seed)
        train_idx, val_idx = random_split(range(n), [n - n_val, n_val], generator=split_rng)
        train_idx = torch.tensor(list(train_idx), dtype=torch.long)
        val_idx = torch.tensor(list(val_idx), dtype=torch.long)
        self.train_set = TensorDataset(x[train_idx], y[train_idx])
        self.val_set = TensorDataset(x[val_idx], y[val_idx])

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.train_set, batch_size=self.hparams.batch_size, sampler=RandomSampler(self.train_set))

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.val_set, batch_size=self.hparams.batch_size, sampler=SequentialSampler(self.val_set))


def make_callbacks(dirpath: str, patience: int, top_k: int) -> list[pl.Callback]:
    """Stop when val_loss has not improved for `patience` epochs; keep the `top_k` best checkpoints."""
    early = EarlyStopping("val_loss", patience=patience, mode="min")
    checkpoints = ModelCheckpoint(dirpath, monitor="val_loss", mode="min", save_top_k=top_k)
    return [early, checkpoints]
