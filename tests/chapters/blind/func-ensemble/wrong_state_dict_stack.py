"""WRONG: stacks state_dict() tensors by hand, which are detached, so the stacked parameters are not leaf tensors that require grad and the ensemble cannot be trained, unlike what "stacks every parameter" with stack_module_state gives (guide: "new leaf tensors that require grad")."""

import copy

import torch
from torch import nn
from torch.func import functional_call, vmap


def stack_ensemble(models: list[nn.Module]) -> tuple[dict, dict, nn.Module]:
    """(params, buffers, base): every parameter and buffer stacked along a new dim 0, and a
    stateless copy of the architecture on the meta device to call them with."""
    states = [m.state_dict() for m in models]
    param_names = [k for k, _ in models[0].named_parameters()]
    buffer_names = [k for k, _ in models[0].named_buffers()]
    params = {k: torch.stack([s[k] for s in states]) for k in param_names}
    buffers = {k: torch.stack([s[k] for s in states]) for k in buffer_names}
    base = copy.deepcopy(models[0]).to("meta")
    return params, buffers, base


def ensemble_forward(params: dict, buffers: dict, base: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Every model on the same batch x: (N, batch, out)."""

    def one_model(p, b, x):
        return functional_call(base, (p, b), (x,))

    return vmap(one_model, in_dims=(0, 0, None))(params, buffers, x)
