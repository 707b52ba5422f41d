"""RIGHT: keeps per-instance running sums reset at each validation epoch start and logs the exact whole-set means at epoch end, names the hyperparameters explicitly, returns a {"loss": ...} dict, and writes the cosine schedule by hand as a LambdaLR over estimated_stepping_batches."""

import math

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(pl.LightningModule):
    def __init__(self, in_features: int, num_classes: int, hidden: int = 64, lr: float = 1e-2) -> None:
        super().__init__()
        self.save_hyperparameters("in_features", "num_classes", "hidden", "lr")
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )
        self._loss_sum = 0.0
        self._correct = 0
        self._seen = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_step=True, on_epoch=True)
        return {"loss": loss}

    def on_validation_epoch_start(self) -> None:
        self._loss_sum, self._correct, self._seen = 0.0, 0, 0

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self._loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
        self._correct += int((logits.argmax(dim=1) == y).sum())
        self._seen += y.shape[0]

    def on_validation_epoch_end(self) -> None:
        self.log("val_loss", self._loss_sum / self._seen)
        self.log("val_acc", self._correct / self._seen)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        total = max(1, int(self.trainer.estimated_stepping_batches))

        def cosine(step: int) -> float:
            return 0.5 * (1.0 + math.cos(math.pi * min(step, total) / total))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, cosine)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
