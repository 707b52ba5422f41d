"""WRONG: __init__ calls pl.seed_everything(0), which reseeds the caller's global torch/numpy/random generators (and sets PL_GLOBAL_SEED) every time a module is built; the guide's __init__ only has to "record the constructor arguments as hyperparameters"."""

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(pl.LightningModule):
    def __init__(self, in_features: int, num_classes: int, hidden: int = 64, lr: float = 1e-2) -> None:
        super().__init__()
        pl.seed_everything(0, verbose=False)  # reproducible initial weights
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
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.trainer.estimated_stepping_batches)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
