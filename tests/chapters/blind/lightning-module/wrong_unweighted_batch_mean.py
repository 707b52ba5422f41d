"""WRONG: val_loss/val_acc are the plain mean of per-batch means, so the short last batch weighs as much as a full one — the stub asks for "the mean over the whole validation set (the last batch is a short one)"."""

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


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
        self._val_losses: list[torch.Tensor] = []
        self._val_accs: list[torch.Tensor] = []

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
        self._val_losses.append(F.cross_entropy(logits, y))
        self._val_accs.append((logits.argmax(dim=-1) == y).float().mean())

    def on_validation_epoch_end(self):
        self.log("val_loss", torch.stack(self._val_losses).mean())
        self.log("val_acc", torch.stack(self._val_accs).mean())
        self._val_losses.clear()
        self._val_accs.clear()

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.trainer.estimated_stepping_batches)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
