"""Reference solution: static post-training quantization with calibration."""

import torch
from torch import nn
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, fuse_modules, get_default_qconfig,
                                   prepare)

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


def quantize_static_int8(model: QuantMLP, calibration_loader) -> nn.Module:
    model.eval()  # key
    model = fuse_modules(model, FUSE)  # key
    model.qconfig = get_default_qconfig("x86")
    prepared = prepare(model)  # key
    with torch.no_grad():
        for x, _ in calibration_loader:
            prepared(x)  # key
    return convert(prepared)
