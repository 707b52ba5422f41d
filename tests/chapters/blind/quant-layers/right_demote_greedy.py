"""RIGHT: works top-down instead of bottom-up: starts with int8 activations everywhere and, while the calibration accuracy is over budget, demotes to weight-only the one layer whose demotion recovers the most accuracy; bytes are summed through each tensor subclass's __tensor_flatten__."""

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


def _build(model: nn.Module, dynamic: set[str], linears: list[str]) -> nn.Module:
    q = copy.deepcopy(model)
    weight_only = set(linears) - dynamic
    if dynamic:
        quantize_(q, Int8DynamicActivationInt8WeightConfig(), filter_fn=lambda m, fqn: fqn in dynamic)
    if weight_only:
        quantize_(q, Int8WeightOnlyConfig(), filter_fn=lambda m, fqn: fqn in weight_only)
    return q


def quantize_for_budget(model: nn.Module, x: torch.Tensor, y: torch.Tensor, max_drop: float) -> nn.Module:
    linears = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    floor = accuracy(model, x, y) - max_drop
    dynamic = set(linears)
    current = _build(model, dynamic, linears)
    while dynamic and accuracy(current, x, y) < floor:
        candidates = []
        for name in sorted(dynamic):
            trial = _build(model, dynamic - {name}, linears)
            candidates.append((accuracy(trial, x, y), name, trial))
        _, demoted, current = max(candidates, key=lambda c: c[0])
        dynamic.discard(demoted)
    return current


def _stored_bytes(t: torch.Tensor) -> int:
    if type(t) not in (torch.Tensor, nn.Parameter) and hasattr(t, "__tensor_flatten__"):
        names, _ = t.__tensor_flatten__()
        return sum(_stored_bytes(getattr(t, n)) for n in names if getattr(t, n) is not None)
    return t.numel() * t.element_size()


def model_bytes(model: nn.Module) -> int:
    return sum(_stored_bytes(p) for p in model.parameters())
