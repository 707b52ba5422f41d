"""WRONG: switches autograd off globally with torch.set_grad_enabled(False) for calibration and never restores it, leaving the caller's process without gradients; the guide's calibration runs "under no_grad", a scope, and nothing else of the caller may change."""

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


def quantize_pt2e_int8(model: nn.Module, example: torch.Tensor, calibration: list[torch.Tensor]) -> nn.Module:
    model = copy.deepcopy(model).eval()
    batch = {0: torch.export.Dim.DYNAMIC}  # serve any batch size, not only the example's
    graph = torch.export.export(model, (example,), dynamic_shapes=(batch,)).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(graph, quantizer)
    torch.set_grad_enabled(False)  # calibration only needs forward passes
    for x in calibration:
        prepared(x)
    return convert_pt2e(prepared)
