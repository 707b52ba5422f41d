"""RIGHT: stacks the parameters and buffers by hand (parameters as fresh leaves that require grad, buffers plain, like stack_module_state) and builds the meta base with to_empty on a deep copy."""

import copy

import torch
from torch import nn
from torch.func import functional_call, vmap


def stack_ensemble(models: list[nn.Module]) -> tuple[dict, dict, nn.Module]:
    """(params, buffers, base): every parameter and buffer stacked along a new dim 0, and a
    stateless copy of the architecture on the meta device to call them with."""
    named_params = [dict(m.named_parameters()) for m in models]
    named_buffers = [dict(m.named_buffers()) for m in models]
    params = {}
    for name in named_params[0]:
        stacked = torch.stack([p[name].detach() for p in named_params])
        params[name] = stacked.requires_grad_(all(p[name].requires_grad for p in named_params))
    buffers = {name: torch.stack([b[name].detach() for b in named_buffers]) for name in named_buffers[0]}
    base = copy.deepcopy(models[0]).to_empty(device="meta")
    return params, buffers, base


def ensemble_forward(params: dict, buffers: dict, base: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Every model on the same batch x: (N, batch, out)."""
    return vmap(lambda p, b: functional_call(base, (p, b), (x,)))(params, buffers)
