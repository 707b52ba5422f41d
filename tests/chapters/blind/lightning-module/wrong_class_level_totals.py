"""WRONG: the running validation totals live in class attributes that are never reset, so the logged val_loss/val_acc average the sanity check and every earlier epoch (and every other instance) — the guide says the values "of the whole validation epoch are averaged"."""

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(pl.LightningModule):
    # running sums over the validation set: (sum of losses, number of correct, number of samples)
    val_totals = {"loss": 0.0, "correct": 0.0, "count": 0}

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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        totals = self.val_totals
        totals["loss"] += F.cross_entropy(logits, y, reduction="sum").item()
        totals["correct"] += (logits.argmax(dim=-1) == y).sum().item()
        totals["count"] += y.numel()

    def on_validation_epoch_end(self):
        totals = self.val_totals
        self.log("val_loss", totals["loss"] / totals["count"])
        self.log("val_acc", totals["correct"] / totals["count"])

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.trainer.estimated_stepping_batches)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
