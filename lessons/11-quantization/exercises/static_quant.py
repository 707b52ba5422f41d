"""Exercise: static post-training quantization with calibration.

Static quantization fixes the scale of every activation ahead of time, from statistics that
observers collect while you run representative data through the model (calibration). The whole
network then runs in int8, between the QuantStub at the entrance and the DeQuantStub at the exit.
"""

import torch
from torch import nn
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, fuse_modules,  # noqa: F401
                                   get_default_qconfig, prepare)

# Pairs of modules to fuse into one quantized LinearReLU each.
FUSE = [["fc1", "relu1"], ["fc2", "relu2"]]


class QuantMLP(nn.Module):
    """An MLP ready for eager-mode quantization: float in, float out, int8 in between."""

    def __init__(self, d_in: int = 16, hidden: int = 64, classes: int = 5) -> None:
        super().__init__()
        self.quant = QuantStub()      # float -> int8 (after convert)
        self.fc1, self.relu1 = nn.Linear(d_in, hidden), nn.ReLU()
        self.fc2, self.relu2 = nn.Linear(hidden, hidden), nn.ReLU()
        self.fc3 = nn.Linear(hidden, classes)
        self.dequant = DeQuantStub()  # int8 -> float (after convert)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.quant(x)
        x = self.relu1(self.fc1(x))
        x = self.relu2(self.fc2(x))
        return self.dequant(self.fc3(x))


def quantize_static_int8(model: QuantMLP, calibration_loader) -> nn.Module:
    """A statically quantized int8 version of the trained `model`, calibrated on the batches of
    `calibration_loader` (each batch is a pair `(x, y)`; only x is needed). Returns it in eval mode."""
    # TODO: turn the trained float model into a statically quantized int8 model for the x86
    #       backend, with each FUSE pair running as one fused int8 module, and activation scales
    #       that come from the calibration data.
    # Watch out: the model arrives straight from training (in training mode); several of the
    # library's steps return a new model instead of changing the one you pass; and observers
    # only learn from data that flows through the model that contains them.
    raise NotImplementedError("TODO: prepare, calibrate and convert")
