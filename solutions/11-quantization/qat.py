"""Reference solution: quantization-aware training (QAT)."""

import torch
from torch import nn
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, fuse_modules_qat, get_default_qat_qconfig,
                                   prepare_qat)

FUSE = [["fc1", "relu1"], ["fc2", "relu2"]]


class QuantMLP(nn.Module):
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
    model.train()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def prepare_for_qat(model: QuantMLP) -> nn.Module:
    model.train()
    model = fuse_modules_qat(model, FUSE)  # key
    model.qconfig = get_default_qat_qconfig("x86")  # key
    return prepare_qat(model)


def quantization_aware_training(model: QuantMLP, loader, epochs: int = 2, lr: float = 1e-3) -> nn.Module:
    prepared = prepare_for_qat(model)
    optimizer = torch.optim.Adam(prepared.parameters(), lr=lr)  # key
    for _ in range(epochs):
        train_epoch(prepared, loader, optimizer)
    prepared.eval()  # key
    return convert(prepared)
