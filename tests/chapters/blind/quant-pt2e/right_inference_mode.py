"""RIGHT: copies the model through its state_dict into a fresh deep copy, calibrates under torch.inference_mode() on all batches stacked into a single pass, and gives the exported batch dimension an explicit named Dim with min=1."""

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
    frozen = copy.deepcopy(model)
    frozen.load_state_dict({k: v.detach().clone() for k, v in model.state_dict().items()})
    frozen.train(False)
    batch_dim = torch.export.Dim("batch", min=1)
    program = torch.export.export(frozen, (example,), dynamic_shapes=({0: batch_dim},))
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(program.module(), quantizer)
    with torch.inference_mode():
        prepared(torch.cat(list(calibration), dim=0))
    return convert_pt2e(prepared)
