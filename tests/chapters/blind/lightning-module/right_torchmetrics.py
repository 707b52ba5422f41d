"""RIGHT: validation metrics are torchmetrics objects (MeanMetric weighted by batch size, micro-averaged MulticlassAccuracy) logged as metric objects, so the epoch value is computed over the whole set by torchmetrics rather than by self.log's averaging."""

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchmetrics import MeanMetric
from torchmetrics.classification import MulticlassAccuracy


class LitClassifier(pl.LightningModule):
    def __init__(self, in_features: int, num_classes: int, hidden: int = 64, lr: float = 1e-2) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )
        self.val_loss = MeanMetric()
        self.val_acc = MulticlassAccuracy(num_classes=num_classes, average="micro")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.val_loss.update(F.cross_entropy(logits, y), weight=y.numel())
        self.val_acc.update(logits, y)
        self.log("val_loss", self.val_loss, on_step=False, on_epoch=True)
        self.log("val_acc", self.val_acc, on_step=False, on_epoch=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        total = self.trainer.estimated_stepping_batches
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total, eta_min=0.0)
        return [optimizer], [{"scheduler": scheduler, "interval": "step", "frequency": 1}]
