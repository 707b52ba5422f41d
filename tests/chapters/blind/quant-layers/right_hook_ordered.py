"""RIGHT: records every Linear's input on the calibration batch with forward hooks, tries int8 activations first on the layers whose inputs look safest (smallest max/median channel ratio), still keeping each choice only if the measured accuracy stays in budget, and builds the final copy by replacing weights module by module."""

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


def _input_outlier_ratio(model: nn.Module, x: torch.Tensor) -> dict[str, float]:
    """max over channels of |input| / median channel magnitude, for every Linear, on a copy of the model."""
    probe = copy.deepcopy(model).eval()
    ratios, hooks = {}, []
    for name, module in probe.named_modules():
        if isinstance(module, nn.Linear):
            def record(mod, args, name=name):
                per_channel = args[0].detach().abs().reshape(-1, args[0].shape[-1]).amax(0)
                ratios[name] = (per_channel.max() / per_channel.median().clamp_min(1e-12)).item()
            hooks.append(module.register_forward_pre_hook(record))
    with torch.no_grad():
        probe(x)
    for h in hooks:
        h.remove()
    return ratios


def _quantized_copy(model: nn.Module, dynamic: frozenset[str]) -> nn.Module:
    q = copy.deepcopy(model)
    for name, module in q.named_modules():
        if isinstance(module, nn.Linear):
            config = Int8DynamicActivationInt8WeightConfig() if name in dynamic else Int8WeightOnlyConfig()
            quantize_(module, config, filter_fn=lambda m, fqn: isinstance(m, nn.Linear))
    return q


def quantize_for_budget(model: nn.Module, x: torch.Tensor, y: torch.Tensor, max_drop: float) -> nn.Module:
    reference = accuracy(model, x, y)
    ratios = _input_outlier_ratio(model, x)
    dynamic: frozenset[str] = frozenset()
    for name in sorted(ratios, key=ratios.get):  # safest-looking first
        trial = dynamic | {name}
        if reference - accuracy(_quantized_copy(model, trial), x, y) <= max_drop:
            dynamic = trial
    return _quantized_copy(model, dynamic)


def model_bytes(model: nn.Module) -> int:
    total = 0
    for p in model.parameters():
        parts = [getattr(p, a, None) for a in ("qdata", "scale", "zero_point")] if hasattr(p, "qdata") else [p]
        total += sum(t.numel() * t.element_size() for t in parts if t is not None)
    return total
