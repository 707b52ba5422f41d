"""WRONG: snapshots (clones) each model's parameters on the first call and reuses them, so after the model trains a second call returns gradients at the old parameters instead of "the gradient of example i's cross-entropy loss" for the model as it is."""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F

_STATE: dict[int, tuple[dict, dict]] = {}


def _state_of(model: nn.Module) -> tuple[dict, dict]:
    key = id(model)
    if key not in _STATE:
        params = {k: v.detach().clone() for k, v in model.named_parameters()}
        buffers = {k: v.detach().clone() for k, v in model.named_buffers()}
        _STATE[key] = (params, buffers)
    return _STATE[key]


def per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of each example's cross-entropy loss with respect to every parameter:
    {name: tensor of shape (batch, *param.shape)}."""
    params, buffers = _state_of(model)

    def sample_loss(params, buffers, xi, yi):
        logits = functional_call(model, (params, buffers), (xi.unsqueeze(0),))
        return F.cross_entropy(logits, yi.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)


def loop_per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The slow way, for comparison: one backward() per example."""
    grads = {k: [] for k, _ in model.named_parameters()}
    for i in range(x.shape[0]):
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for k, p in model.named_parameters():
            grads[k].append(p.grad.clone())
    model.zero_grad(set_to_none=True)
    return {k: torch.stack(g) for k, g in grads.items()}
