"""WRONG: counts epochs from 1 with range(1, epochs), so it fine-tunes one epoch fewer than asked (none at all for epochs=1); the task says "fine-tuning with fake quantization for epochs epochs ... one call of the given train_epoch per epoch"."""

import copy
import logging

for _name in ("torchao", "torch.utils._pytree"):  # torchao's notices about CUDA-only kernels
    logging.getLogger(_name).setLevel(logging.ERROR)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchao.quantization import IntxWeightOnlyConfig, PerAxis, quantize_  # noqa: E402
from torchao.quantization.qat import QATConfig  # noqa: E402

BITS = torch.int2


def int2_config() -> IntxWeightOnlyConfig:
    """2-bit weights, one scale per output row (the same scheme for training and for conversion)."""
    return IntxWeightOnlyConfig(weight_dtype=BITS, granularity=PerAxis(0))


def train_epoch(model: nn.Module, loader, optimizer: torch.optim.Optimizer) -> None:
    model.train()
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def quantize_qat(model: nn.Module, loader, epochs: int = 2, lr: float = 1e-3) -> nn.Module:
    model = copy.deepcopy(model)
    base = int2_config()
    quantize_(model, QATConfig(base, step="prepare"))  # key
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # key
    for epoch in range(1, epochs):  # epochs 1 .. epochs
        train_epoch(model, loader, optimizer)
    quantize_(model, QATConfig(base, step="convert"))  # key
    return model.eval()
