"""Exercise: per-sample gradients with vmap(grad(...)) and functional_call.

`loss.backward()` on a batch gives one gradient, summed (averaged) over the examples. For
differential privacy, influence estimates or gradient-noise statistics you need the gradient of
every example separately, without running backward once per example.
"""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap  # noqa: F401  (you will need them)
from torch.nn import functional as F


def per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of each example's cross-entropy loss with respect to every parameter:
    {name: tensor of shape (batch, *param.shape)}."""
    # TODO: take the parameters (and buffers) out of the model as dicts of plain tensors, so
    #       they can be passed in explicitly.
    # TODO: a function computing ONE example's loss from those dicts. Watch out: inside vmap an
    #       example has lost its batch dim, and this model was built for batches.
    # TODO: differentiate it with respect to the parameters and map that over the examples
    #       (the parameters are shared by all examples). No Python loop, no backward(), and
    #       leave the model as it was (no .grad set).
    raise NotImplementedError("TODO: implement per_sample_grads")


def loop_per_sample_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    """The slow way, for comparison: one backward() per example."""
    grads = {k: [] for k, _ in model.named_parameters()}
    for i in range(x.shape[0]):
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for k, p in model.named_parameters():
            grads[k].append(p.grad.clone())
    model.zero_grad(set_to_none=True)
    return {k: torch.stack(g) for k, g in grads.items()}
