"""WRONG: turns autograd off for the whole process with torch.set_grad_enabled(False) to speed up the trial runs and never turns it back on, so the caller's later training silently builds no graph; the model given must come back unchanged and nothing else is the function's to change."""

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


def quantize_with(model: nn.Module, plan: dict[str, str]) -> nn.Module:
    """A quantized copy of `model`: plan maps a Linear's name to "dynamic" or "weight-only"."""
    q = copy.deepcopy(model)
    quantize_(q, Int8DynamicActivationInt8WeightConfig(), filter_fn=lambda m, fqn: plan.get(fqn) == "dynamic")
    quantize_(q, Int8WeightOnlyConfig(), filter_fn=lambda m, fqn: plan.get(fqn) == "weight-only")
    return q


def quantize_for_budget(model: nn.Module, x: torch.Tensor, y: torch.Tensor, max_drop: float) -> nn.Module:
    torch.set_grad_enabled(False)  # only inference from here on: no graphs for the trials
    base = accuracy(model, x, y)
    linears = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    plan = dict.fromkeys(linears, "weight-only")
    # Greedy: try int8 activations one layer at a time, keep them where the budget still holds.
    for name in linears:
        trial = {**plan, name: "dynamic"}
        if base - accuracy(quantize_with(model, trial), x, y) <= max_drop:
            plan = trial
    return quantize_with(model, plan)


def tensor_bytes(t: torch.Tensor) -> int:
    if hasattr(t, "qdata"):  # a torchao quantized weight: int8 data, one scale and zero point per row
        return sum(tensor_bytes(part) for part in (t.qdata, t.scale, t.zero_point) if part is not None)
    return t.numel() * t.element_size()


def model_bytes(model: nn.Module) -> int:
    return sum(tensor_bytes(p) for p in model.parameters())
