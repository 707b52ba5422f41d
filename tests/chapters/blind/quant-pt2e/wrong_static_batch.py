"""WRONG: exports with the example batch's shape only (no dynamic_shapes), so the graph is specialised to that batch size; the stub says "the graph must serve any batch size" (the check runs batches of 1, 7 and 200)."""

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
    rows = len(getattr(model, "example_rows", x))
    with torch.no_grad():
        hits = [(model(xb).argmax(1) == yb) for xb, yb in zip(x.split(rows), y.split(rows)) if len(xb) == rows]
        return torch.cat(hits).float().mean().item()


def pt2e_int8(graph: nn.Module, calibration: list[torch.Tensor], keep_float: list[str]) -> nn.Module:
    """The int8 graph of an exported one, with the Linears named in keep_float left in float."""
    quantizer = X86InductorQuantizer()
    quantizer.set_global(get_default_x86_inductor_quantization_config())
    for name in keep_float:
        quantizer.set_module_name_qconfig(name, None)  # key
    example_rows = graph.example_rows
    prepared = prepare_pt2e(copy.deepcopy(graph), quantizer)  # prepare changes the graph it gets
    with torch.no_grad():
        for x in calibration:
            for part in x.split(len(example_rows)):
                if len(part) == len(example_rows):
                    prepared(part)  # key
    return convert_pt2e(prepared)  # key


def quantize_within_budget(
    model: nn.Module,
    example: torch.Tensor,
    calibration: list[torch.Tensor],
    val: tuple[torch.Tensor, torch.Tensor],
    max_drop: float,
    min_share: float,
) -> nn.Module:
    model = copy.deepcopy(model).eval()  # key
    graph = torch.export.export(model, (example,)).module()  # key
    graph.example_rows = example
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
    return q
