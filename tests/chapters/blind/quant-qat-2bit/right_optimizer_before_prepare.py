"""RIGHT: builds the Adam optimizer on the copy before the prepare step (the guide notes the weight Parameters survive the swap to FakeQuantizedLinear), keeps the base config in a module constant, and runs the epochs through an explicit counter."""

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
    student = copy.deepcopy(model)
    optimizer = torch.optim.Adam(student.parameters(), lr=lr)  # same Parameter objects after prepare
    scheme = int2_config()
    quantize_(student, QATConfig(scheme, step="prepare"))
    epoch = 0
    while epoch < epochs:
        train_epoch(student, loader, optimizer)
        epoch += 1
    quantize_(student, QATConfig(scheme, step="convert"))
    student.eval()
    return student
