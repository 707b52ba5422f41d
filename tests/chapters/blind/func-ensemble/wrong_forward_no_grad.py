"""WRONG: runs the ensemble under torch.no_grad(), so the output is cut off from the stacked parameters and training all N models at once (the guide: "hand params.values() to an optimizer") gets no gradient."""

import copy

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap


def stack_ensemble(models: list[nn.Module]) -> tuple[dict, dict, nn.Module]:
    """(params, buffers, base): every parameter and buffer stacked along a new dim 0, and a
    stateless copy of the architecture on the meta device to call them with."""
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")
    return params, buffers, base


@torch.no_grad()
def ensemble_forward(params: dict, buffers: dict, base: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Every model on the same batch x: (N, batch, out)."""

    def one_model(p, b, x):
        return functional_call(base, (p, b), (x,))

    return vmap(one_model, in_dims=(0, 0, None))(params, buffers, x)
