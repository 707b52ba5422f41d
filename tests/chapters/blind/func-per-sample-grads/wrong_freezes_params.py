"""WRONG: switches requires_grad off on the caller's parameters so no .grad can ever be written, which leaves the model frozen for its next training step, against the stub's "leave the model as it was"."""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F


def per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of each example's cross-entropy loss with respect to every parameter:
    {name: tensor of shape (batch, *param.shape)}."""
    model.requires_grad_(False)  # torch.func.grad does the differentiating, not autograd
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())

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
