"""RIGHT: exports a deep copy as it arrives (training mode) and then turns the exported graph's Dropout into its eval form with torchao's move_exported_model_to_eval, instead of calling .eval() before export; the rest is the reference's greedy, with each trial prepared from its own deep copy and calibrated on every calibration batch."""

import copy
import logging

for _name in ("torchao", "torch.utils._pytree"):  # torchao's notices about CUDA-only kernels
    logging.getLogger(_name).setLevel(logging.ERROR)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchao.quantization.pt2e import move_exported_model_to_eval  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (  # noqa: E402
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def quantize_within_budget(
    model: nn.Module,
    example: torch.Tensor,
    calibration: list[torch.Tensor],
    val: tuple[torch.Tensor, torch.Tensor],
    max_drop: float,
    min_share: float,
) -> nn.Module:
    mine = copy.deepcopy(model)  # still in training mode, like the caller's
    graph = torch.export.export(mine, (example,), dynamic_shapes=({0: torch.export.Dim.DYNAMIC},)).module()
    graph = move_exported_model_to_eval(graph)  # Dropout in the graph becomes the identity

    def int8(in_float):
        quantizer = X86InductorQuantizer()
        quantizer.set_global(get_default_x86_inductor_quantization_config())
        for name in in_float:
            quantizer.set_module_name_qconfig(name, None)
        prepared = prepare_pt2e(copy.deepcopy(graph), quantizer)
        with torch.no_grad():
            for x in calibration:
                prepared(x)
        return convert_pt2e(prepared)

    base = accuracy(graph, *val)  # the float graph in eval form: the float model's accuracy
    names = [n for n, m in mine.named_modules() if isinstance(m, nn.Linear)]
    in_float: list[str] = []
    result = int8(in_float)
    while base - accuracy(result, *val) > max_drop and len(in_float) < len(names):
        candidates = [int8(in_float + [n]) for n in names if n not in in_float]
        left = [n for n in names if n not in in_float]
        scores = [accuracy(c, *val) for c in candidates]
        i = max(range(len(left)), key=scores.__getitem__)
        in_float.append(left[i])
        result = candidates[i]
    return result
