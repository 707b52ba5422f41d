"""WRONG: the trials run on deep copies, but the chosen plan is applied with quantize_ to the caller's model itself and that object is returned; the guide asks for "a quantized copy" that "leaves the model you were given untouched"."""

import copy
import logging

for _name in ("torchao", "torch.utils._pytree"):  # torchao's notices about CUDA-only kernels
    logging.getLogger(_name).setLevel(logging.ERROR)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchao.quantization import Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig, quantize_  # noqa: E402


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def quantize_with(model: nn.Module, plan: dict[str, str], in_place: bool = False) -> nn.Module:
    """`model` quantized by `plan` (a Linear's name -> "dynamic" or "weight-only"); a copy unless in_place."""
    q = model if in_place else copy.deepcopy(model)
    quantize_(q, Int8DynamicActivationInt8WeightConfig(), filter_fn=lambda m, fqn: plan.get(fqn) == "dynamic")
    quantize_(q, Int8WeightOnlyConfig(), filter_fn=lambda m, fqn: plan.get(fqn) == "weight-only")
    return q


def quantize_for_budget(model: nn.Module, x: torch.Tensor, y: torch.Tensor, max_drop: float) -> nn.Module:
    base = accuracy(model, x, y)
    linears = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    plan = dict.fromkeys(linears, "weight-only")
    # Greedy: try int8 activations one layer at a time, keep them where the budget still holds.
    for name in linears:
        trial = {**plan, name: "dynamic"}
        if base - accuracy(quantize_with(model, trial), x, y) <= max_drop:
            plan = trial
    return quantize_with(model, plan, in_place=True)  # the trials were copies; no need for another


def tensor_bytes(t: torch.Tensor) -> int:
    if hasattr(t, "qdata"):  # a torchao quantized weight: int8 data, one scale and zero point per row
        return sum(tensor_bytes(part) for part in (t.qdata, t.scale, t.zero_point) if part is not None)
    return t.numel() * t.element_size()


def model_bytes(model: nn.Module) -> int:
    return sum(tensor_bytes(p) for p in model.parameters())
