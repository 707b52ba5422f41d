"""WRONG: puts the model in eval mode "to be safe" and never restores it, so the caller's model comes back in another mode although the stub says to "leave the model as it was"."""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F


def per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of each example's cross-entropy loss with respect to every parameter:
    {name: tensor of shape (batch, *param.shape)}."""
    model.eval()  # no dropout / batch statistics inside vmap
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

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
