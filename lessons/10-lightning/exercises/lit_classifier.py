"""Exercise: complete a LightningModule for a small classification task.

The network is given. Fill in the parts Lightning calls: what one training step and one
validation step compute and log, and which optimizer and learning-rate schedule to use.
"""

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(pl.LightningModule):
    def __init__(self, in_features: int, num_classes: int, hidden: int = 64, lr: float = 1e-2) -> None:
        super().__init__()
        # TODO: make the constructor arguments available as self.hparams (and saved in checkpoints)
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch, batch_idx):
        # TODO: batch is (x, y). The cross-entropy loss, logged as "train_loss".
        #       Watch out: what this method returns is what Lightning trains on.
        raise NotImplementedError("TODO: implement training_step")

    def validation_step(self, batch, batch_idx):
        # TODO: "val_loss" (cross-entropy) and "val_acc" (fraction of samples whose highest
        #       logit is the label), logged so that what the epoch reports under exactly those
        #       names is the mean over the whole validation set (the last batch is a short one).
        raise NotImplementedError("TODO: implement validation_step")

    def configure_optimizers(self):
        # TODO: AdamW with the learning rate this model was built with, and a cosine schedule
        #       that starts at that rate and decays smoothly to about 0 over the whole fit,
        #       updated after every optimizer step (not once per epoch).
        #       Watch out: the number of optimizer steps is not known in __init__; the Trainer
        #       knows it by the time this method runs.
        raise NotImplementedError("TODO: implement configure_optimizers")


if __name__ == "__main__":
    from torch.utils.data import DataLoader, TensorDataset

    g = torch.Generator().manual_seed(0)
    centers = torch.randn(4, 8, generator=g) * 2.5
    y = torch.randint(0, 4, (1024,), generator=g)
    x = centers[y] + torch.randn(1024, 8, generator=g)
    train = DataLoader(TensorDataset(x[:768], y[:768]), batch_size=64, shuffle=True)
    val = DataLoader(TensorDataset(x[768:], y[768:]), batch_size=128)
    trainer = pl.Trainer(max_epochs=4, accelerator="auto", logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(LitClassifier(in_features=8, num_classes=4), train, val)
    print({k: round(v.item(), 4) for k, v in trainer.callback_metrics.items()})
