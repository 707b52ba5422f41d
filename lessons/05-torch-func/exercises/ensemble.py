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
    # TODO: every parameter AND buffer of the N models stacked along a new leading dim
    #       (torch.func has a helper for exactly this).
    # TODO: a base module with the same architecture whose tensors take no memory (the "meta"
    #       device). Watch out: the caller's models must come back exactly as they were.
    raise NotImplementedError("TODO: implement stack_ensemble")


def ensemble_forward(params: dict, buffers: dict, base: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Every model on the same batch x: (N, batch, out)."""
    # TODO: run base as a pure function of (params, buffers, x), once per model, in ONE vmapped
    #       call: the stacked dicts carry the model index, the batch x is the same for all.
    raise NotImplementedError("TODO: implement ensemble_forward")
