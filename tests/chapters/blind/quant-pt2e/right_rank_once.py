"""RIGHT: measures each Linear alone in float once, ranks the layers by the accuracy their return to float recovers, and gives them back in that order only until the val accuracy is within max_drop (checking the int8 share against min_share from weight.numel()); the eval copy is made with .train(False) and every trial is its own prepare of a deep copy, calibrated on all calibration batches."""

import copy
import logging

for _name in ("torchao", "torch.utils._pytree"):  # torchao's notices about CUDA-only kernels
    logging.getLogger(_name).setLevel(logging.ERROR)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (  # noqa: E402
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def build(exported, calibration, in_float):
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config())
    for name in in_float:
        quantizer.set_module_name_qconfig(name, None)
    prepared = prepare_pt2e(copy.deepcopy(exported), quantizer)
    with torch.no_grad():
        for batch in calibration:
            prepared(batch)
    return convert_pt2e(prepared)


def quantize_within_budget(
    model: nn.Module,
    example: torch.Tensor,
    calibration: list[torch.Tensor],
    val: tuple[torch.Tensor, torch.Tensor],
    max_drop: float,
    min_share: float,
) -> nn.Module:
    frozen = copy.deepcopy(model).train(False)
    exported = torch.export.export(
        frozen, (example,), dynamic_shapes=({0: torch.export.Dim.DYNAMIC},)
    ).module()
    target = accuracy(frozen, *val) - max_drop
    sizes = {n: m.weight.numel() for n, m in frozen.named_modules() if isinstance(m, nn.Linear)}
    total = sum(sizes.values())

    everything = build(exported, calibration, [])
    if accuracy(everything, *val) >= target:
        return everything
    # one measurement per layer: how much does giving only this layer back to float recover?
    score = {n: accuracy(build(exported, calibration, [n]), *val) for n in sizes}
    order = sorted(sizes, key=lambda n: -score[n])
    in_float: list[str] = []
    best = everything
    for name in order:
        if 1 - (sum(sizes[n] for n in in_float) + sizes[name]) / total < min_share:
            continue  # this layer is too large to keep in float
        in_float.append(name)
        best = build(exported, calibration, in_float)
        if accuracy(best, *val) >= target:
            break
    return best
