"""RIGHT: the same prepare / train / convert, with both quantize_ calls given an explicit filter_fn (every Linear, FakeQuantizedLinear included), Adam built from the list of trainable parameters of the prepared copy, and the copy made with copy.deepcopy inside a helper; the returned model is put in eval mode with .train(False)."""

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


def is_linear(module: nn.Module, fqn: str) -> bool:
    return isinstance(module, nn.Linear)


def private_copy(model: nn.Module) -> nn.Module:
    return copy.deepcopy(model)


def quantize_qat(model: nn.Module, loader, epochs: int = 2, lr: float = 1e-3) -> nn.Module:
    scheme = int2_config()
    student = private_copy(model)
    quantize_(student, QATConfig(scheme, step="prepare"), filter_fn=is_linear)
    trainable = [p for p in student.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(trainable, lr=lr)
    epoch = 0
    while epoch < epochs:
        train_epoch(student, loader, optimizer)
        epoch += 1
    quantize_(student, QATConfig(scheme, step="convert"), filter_fn=is_linear)
    return student.train(False)
