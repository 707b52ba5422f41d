"""Reference solution: dynamic int8 quantization of Linear and LSTM layers, and its size on disk."""

import os

import torch
from torch import nn
from torch.ao.quantization import quantize_dynamic


def quantize_dynamic_int8(model: nn.Module) -> nn.Module:
    return quantize_dynamic(model, {nn.Linear, nn.LSTM}, dtype=torch.qint8)  # key


def state_dict_bytes(model: nn.Module, path: str) -> int:
    torch.save(model.state_dict(), path)  # key
    return os.path.getsize(path)
