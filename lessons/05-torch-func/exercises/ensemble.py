"""Exercise: run an ensemble of identical-architecture models as one vmapped call.

Instead of looping over N models, stack their parameters (and buffers) into tensors with a
leading dim N and vmap one functional forward over them.
"""

import copy  # noqa: F401

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap  # noqa: F401


def stack_ensemble(models: list[nn.Module]) -> tuple[dict, dict, nn.Module]:
    """(params, buffers, base): every parameter and buffer stacked along a new dim 0, and a
    stateless copy of the architecture on the meta device to call them with."""
    # TODO: params, buffers = stack_module_state(models)
    # TODO: base: a copy of models[0] whose tensors live on the "meta" device (no storage).
    raise NotImplementedError("TODO: implement stack_ensemble")


def ensemble_forward(params: dict, buffers: dict, base: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Every model on the same batch x: (N, batch, out)."""
    # TODO: a function of (params, buffers, x) calling base through functional_call, vmapped
    #       over the models (dim 0 of every params and buffers entry) with x shared by all.
    raise NotImplementedError("TODO: implement ensemble_forward")
