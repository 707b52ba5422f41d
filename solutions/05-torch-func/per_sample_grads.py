"""Reference solution: per-sample gradients with vmap(grad(...)) and functional_call."""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F


def per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of each example's cross-entropy loss with respect to every parameter:
    {name: tensor of shape (batch, *param.shape)}."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def sample_loss(params, buffers, xi, yi):
        # Inside vmap, xi has lost its batch dim; the model was built for batches, so give it
        # a batch of one (and the target to match).
        logits = functional_call(model, (params, buffers), (xi.unsqueeze(0),))  # key
        return F.cross_entropy(logits, yi.unsqueeze(0))

    # grad differentiates with respect to the first argument (the params dict); vmap maps
    # over the examples and shares the parameters and buffers.
    return vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)  # key
