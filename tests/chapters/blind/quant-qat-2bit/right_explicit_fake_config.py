"""RIGHT: spells out the fake quantization instead of letting torchao infer it (QATConfig(weight_config=IntxFakeQuantizeConfig(int2, per-row, symmetric))) and converts with the int2 base config, and copies the model through its state dict into a deep copy."""

import copy
import logging

for _name in ("torchao", "torch.utils._pytree"):  # torchao's notices about CUDA-only kernels
    logging.getLogger(_name).setLevel(logging.ERROR)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchao.quantization import IntxWeightOnlyConfig, MappingType, PerAxis, quantize_  # noqa: E402
from torchao.quantization.qat import IntxFakeQuantizeConfig, QATConfig  # noqa: E402

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


def _int2_fake_quant() -> IntxFakeQuantizeConfig:
    """The rounding int2_config() will apply: symmetric 2-bit, one scale per output row."""
    # scale_precision=None: the scale keeps the weight's dtype, exactly as the config inferred from int2_config()
    return IntxFakeQuantizeConfig(BITS, granularity=PerAxis(0), mapping_type=MappingType.SYMMETRIC, scale_precision=None)


def quantize_qat(model: nn.Module, loader, epochs: int = 2, lr: float = 1e-3) -> nn.Module:
    qat_model = copy.deepcopy(model)
    qat_model.load_state_dict(model.state_dict())
    quantize_(qat_model, QATConfig(weight_config=_int2_fake_quant(), step="prepare"))
    optimizer = torch.optim.Adam(qat_model.parameters(), lr=lr)
    for _ in range(epochs):
        train_epoch(qat_model, loader, optimizer)
    quantize_(qat_model, QATConfig(int2_config(), step="convert"))
    return qat_model.eval()
