"""Exercise: dynamic int8 quantization of a model's Linear and LSTM layers, and its size on disk.

Dynamic quantization stores the weights as int8 ahead of time and quantizes the activations on
the fly, batch by batch, so it needs no calibration data. torch.ao.quantization prints a
DeprecationWarning in current PyTorch (its successor is the separate torchao package); it still
works here, and the warning is expected.
"""

import os  # noqa: F401

import torch
from torch import nn
from torch.ao.quantization import quantize_dynamic  # noqa: F401


def quantize_dynamic_int8(model: nn.Module) -> nn.Module:
    """An int8 dynamically quantized copy of `model`: every nn.Linear and every nn.LSTM.

    Leave `model` itself unchanged (it is the fp32 baseline).
    """
    # TODO: a dynamically quantized int8 copy. Watch out: this model has two kinds of layers
    # with weights, and a layer type you do not name stays in float32 (and keeps the file large).
    raise NotImplementedError("TODO: quantize the Linear and LSTM layers to int8")


def state_dict_bytes(model: nn.Module, path: str) -> int:
    """Save `model.state_dict()` to `path` with torch.save and return the file's size in bytes."""
    # TODO: write the model's weights (its state_dict, not the module object) to `path` and
    # return the size of the file that is really on disk.
    raise NotImplementedError("TODO: save the state_dict and measure the file")
