"""RIGHT: adds the batch-of-one dimension before vmap (x.unsqueeze(1), y.unsqueeze(1)) instead of inside the per-example function, and closes over the buffers as constants."""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F


def per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of each example's cross-entropy loss with respect to every parameter:
    {name: tensor of shape (batch, *param.shape)}."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def batch_of_one_loss(p, xb, yb):  # xb: (1, *example), yb: (1,)
        return F.cross_entropy(functional_call(model, {**buffers, **p}, (xb,)), yb)

    per_example = vmap(grad(batch_of_one_loss), in_dims=(None, 0, 0))
    return per_example(params, x.unsqueeze(1), y.unsqueeze(1))


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
