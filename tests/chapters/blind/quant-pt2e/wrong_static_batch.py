"""WRONG: exports without dynamic_shapes, so the graph is specialised to the example's batch size and other batch sizes fail; the stub says "the quantized model must serve any batch size, not only the example's"."""

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
    graph = torch.export.export(model, (example,)).module()
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(graph, quantizer)
    with torch.no_grad():
        for x in calibration:
            prepared(x)
    return convert_pt2e(prepared)
