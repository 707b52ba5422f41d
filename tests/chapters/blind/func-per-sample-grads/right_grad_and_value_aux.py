"""RIGHT: uses grad_and_value with has_aux (the loss value and logits passed through and discarded), argnums=0 spelled out, and a tuple (params, buffers) argument mapped with a nested in_dims."""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F

from torch.func import grad_and_value


def per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of each example's cross-entropy loss with respect to every parameter:
    {name: tensor of shape (batch, *param.shape)}."""
    state = (
        {name: p.detach() for name, p in model.named_parameters()},
        {name: b.detach() for name, b in model.named_buffers()},
    )

    def one(params, buffers, example, label):
        logits = functional_call(model, (params, buffers), (example[None],))
        return F.cross_entropy(logits, label[None]), logits

    def grads_only(state, example, label):
        g, _ = grad_and_value(one, argnums=0, has_aux=True)(state[0], state[1], example, label)
        return g

    return vmap(grads_only, in_dims=((None, None), 0, 0))(state, x, y)


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
