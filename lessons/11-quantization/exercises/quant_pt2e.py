"""Exercise: static int8 quantization of an exported graph (PT2E) with torchao.

`quantize_pt2e_int8(model, example, calibration)` gets a trained fp32 model (it has a Dropout and
arrives in training mode, straight from its training loop), an example input batch, and a list of
calibration batches drawn from the data the model will serve. Return the int8 model that the PT2E
flow produces: export the model's graph, let torchao's x86 quantizer annotate it with observers,
calibrate them on the batches you were given, and convert.

Watch out for:
- the model you are given stays as it is (weights and training mode);
- the quantized model must serve any batch size, not only the example's;
- inference behaviour: nothing random may remain in the graph.

The PT2E functions live in torchao (`torch.ao.quantization.quantize_pt2e` no longer exists in
torch 2.13): `torchao.quantization.pt2e.quantize_pt2e` and
`torchao.quantization.pt2e.quantizer.x86_inductor_quantizer`.
"""

import copy  # noqa: F401
import logging

for _name in ("torchao", "torch.utils._pytree"):  # torchao's notices about CUDA-only kernels
    logging.getLogger(_name).setLevel(logging.ERROR)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402,F401
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (  # noqa: E402,F401
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)


def quantize_pt2e_int8(model: nn.Module, example: torch.Tensor, calibration: list[torch.Tensor]) -> nn.Module:
    # TODO: export -> prepare with the x86 quantizer -> calibrate -> convert.
    raise NotImplementedError("TODO: quantize_pt2e_int8")
