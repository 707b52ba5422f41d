"""WRONG: exports the caller's model itself (eval for the export, then its training mode restored) and builds the returned graph from that exported graph without a copy, since it is the last use; the kept-float Linear then reads the caller's own weight tensors, and the guide says the graph must share no tensor with the model it was given."""

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


def pt2e_int8(graph: nn.Module, calibration: list[torch.Tensor], keep_float: list[str], copy_graph: bool = True) -> nn.Module:
    """The int8 graph of an exported one, with the Linears named in keep_float left in float."""
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    for name in keep_float:
        quantizer.set_module_name_qconfig(name, None)  # key
    prepared = prepare_pt2e(copy.deepcopy(graph) if copy_graph else graph, quantizer)  # prepare changes the graph it gets
    with torch.no_grad():
        for x in calibration:
            prepared(x)  # key
    return convert_pt2e(prepared)  # key


def quantize_within_budget(
    model: nn.Module,
    example: torch.Tensor,
    calibration: list[torch.Tensor],
    val: tuple[torch.Tensor, torch.Tensor],
    max_drop: float,
    min_share: float,
) -> nn.Module:
    was_training = model.training
    model.eval()
    batch = {0: torch.export.Dim.DYNAMIC}  # serve any batch size, not only the example's
    graph = torch.export.export(model, (example,), dynamic_shapes=(batch,)).module()  # key
    base = accuracy(model, *val)
    linears = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    keep: list[str] = []
    q = pt2e_int8(graph, calibration, keep)
    # greedy: while int8 costs more than the budget allows, give back to float the layer whose
    # return recovers the most accuracy (the fewer layers in float, the larger the int8 share)
    for _ in linears:  # at most every layer back to float
        if base - accuracy(q, *val) <= max_drop:  # key
            break
        trials = {n: pt2e_int8(graph, calibration, keep + [n]) for n in linears if n not in keep}
        best = max(trials, key=lambda n: accuracy(trials[n], *val))  # key
        keep.append(best)
        q = trials[best]
    model.train(was_training)  # the caller's mode, as it was
    return pt2e_int8(graph, calibration, keep, copy_graph=False)  # last use of graph: no copy needed
