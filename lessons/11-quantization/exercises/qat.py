"""Exercise: quantization-aware training (QAT).

QAT fine-tunes a trained model while FakeQuantize modules round its weights and activations to
int8 values in every forward pass, so the weights adapt to the rounding. Then the model is
converted to real int8 modules, as in static quantization.
"""

import torch
from torch import nn
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, fuse_modules_qat,  # noqa: F401
                                   get_default_qat_qconfig, prepare_qat)

FUSE = [["fc1", "relu1"], ["fc2", "relu2"]]


class QuantMLP(nn.Module):
    """The same quantization-ready MLP as in the static exercise."""

    def __init__(self, d_in: int = 16, hidden: int = 64, classes: int = 5) -> None:
        super().__init__()
        self.quant = QuantStub()
        self.fc1, self.relu1 = nn.Linear(d_in, hidden), nn.ReLU()
        self.fc2, self.relu2 = nn.Linear(hidden, hidden), nn.ReLU()
        self.fc3 = nn.Linear(hidden, classes)
        self.dequant = DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.quant(x)
        x = self.relu1(self.fc1(x))
        x = self.relu2(self.fc2(x))
        return self.dequant(self.fc3(x))


def train_epoch(model: nn.Module, loader, optimizer: torch.optim.Optimizer) -> None:
    """One epoch of cross-entropy training (given: no need to change it)."""
    model.train()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def prepare_for_qat(model: QuantMLP) -> nn.Module:
    """The model with FUSE pairs fused and fake quantization inserted (x86 QAT qconfig), in
    training mode, ready to train."""
    # TODO: the model ready for quantization-aware training on the x86 backend: each FUSE pair
    #       as one fused module, and fake quantization of weights and activations inserted.
    # Watch out: the trained model arrives in eval mode, and the QAT tools differ from the
    # post-training ones (a post-training qconfig only inserts observers, which round nothing).
    raise NotImplementedError("TODO: prepare the model for quantization-aware training")


def quantization_aware_training(model: QuantMLP, loader, epochs: int = 2, lr: float = 1e-3) -> nn.Module:
    """Fine-tune the trained fp32 `model` with fake quantization for `epochs` epochs of `loader`
    (Adam with learning rate `lr`), then return the converted int8 model in eval mode."""
    # TODO: prepare the model, fine-tune it with the given train_epoch once per epoch (Adam at
    #       learning rate `lr`), then return the converted int8 model in eval mode.
    # Watch out: preparing gives you a different model object from the one you were passed, and
    # every argument of this function must be used.
    raise NotImplementedError("TODO: train with fake quantization, then convert")
