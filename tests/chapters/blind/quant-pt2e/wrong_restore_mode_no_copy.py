"""WRONG: skips the copy and only restores the training mode afterwards, so the returned int8 graph still holds the caller's own bias Parameters and changes whenever the caller's model is trained further; the stub asks for "the int8 model that the PT2E flow produces" while "the model you are given stays as it is", i.e. two independent models."""

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


def quantize_pt2e_int8(model: nn.Module, example: torch.Tensor, calibration: list[torch.Tensor]) -> nn.Module:
    modes = {module: module.training for module in model.modules()}
    model.eval()  # export the inference graph; the modes are put back below
    try:
        batch = {0: torch.export.Dim.DYNAMIC}
        graph = torch.export.export(model, (example,), dynamic_shapes=(batch,)).module()
    finally:
        for module, training in modes.items():
            module.train(training)
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(graph, quantizer)
    with torch.no_grad():
        for x in calibration:
            prepared(x)
    return convert_pt2e(prepared)
