"""WRONG: T_max is hard-coded to 4 epochs x 12 batches (the __main__ block's sizes) instead of the fit's real number of optimizer steps — the guide asks for a cosine "that runs one period over the whole fit" and the stub says only the Trainer knows that number."""

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F

EPOCHS = 4
BATCHES_PER_EPOCH = 768 // 64


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
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(dim=-1) == y).float().mean())

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS * BATCHES_PER_EPOCH)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
