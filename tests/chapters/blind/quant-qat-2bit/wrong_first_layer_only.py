"""WRONG: prepares only the first Linear (the layer whose weights span three orders of magnitude) with fake quantization and converts every Linear, so the other layers are stored in 2 bits without ever having trained against the rounding; the task is fine-tuning "with fake quantization" so that the Linear weights, all stored with int2_config(), learn to live with it."""

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
    first = next(name for name, m in model.named_modules() if isinstance(m, nn.Linear))
    quantize_(model, QATConfig(base, step="prepare"), filter_fn=lambda m, fqn: fqn == first)  # key: the layer that suffers
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # key
    for _ in range(epochs):
        train_epoch(model, loader, optimizer)
    quantize_(model, QATConfig(base, step="convert"))  # key
    quantize_(model, base, filter_fn=lambda m, fqn: isinstance(m, nn.Linear) and fqn != first)  # the layers that were not prepared
    return model.eval()
