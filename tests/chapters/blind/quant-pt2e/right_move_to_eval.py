"""RIGHT: exports a deep copy still in training mode and uses torchao's move_exported_model_to_eval on the prepared and converted graphs to turn Dropout off, instead of calling eval() on the module before export."""

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


def quantize_pt2e_int8(model: nn.Module, example: torch.Tensor, calibration: list[torch.Tensor]) -> nn.Module:
    private = copy.deepcopy(model)  # never touch the caller's module or its parameters
    exported = torch.export.export(private, (example,), dynamic_shapes=({0: torch.export.Dim.AUTO},))
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(exported.module(), quantizer)
    move_exported_model_to_eval(prepared)  # dropout -> identity before the observers see data
    with torch.no_grad():
        for batch in calibration:
            prepared(batch)
    converted = convert_pt2e(prepared)
    move_exported_model_to_eval(converted)
    return converted
