"""Exercise: the MAML inner loop with torch.func.grad, and the meta-loss over tasks.

MAML learns an initialisation: for each task, a few SGD steps on its support set adapt the
parameters; the loss of the adapted parameters on the task's query set, averaged over tasks, is
what the outer optimizer minimises, differentiating through the inner steps.
"""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap  # noqa: F401  (you will need them)
from torch.nn import functional as F


def inner_adapt(model: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor,
                lr: float, steps: int) -> dict[str, torch.Tensor]:
    """`steps` steps of plain SGD on the MSE loss of (x, y), starting from `params`.
    Returns new tensors, still differentiable with respect to the starting `params`."""
    # TODO: `steps` steps of plain SGD (no momentum) on the MSE of the model's prediction for x
    #       against y, with the model run on the parameters you were given, not its own.
    # TODO: watch out: the outer loop differentiates through these steps. Anything that cuts the
    #       graph (detach, .data, in-place updates) silently turns this into first-order MAML.
    raise NotImplementedError("TODO: implement inner_adapt")


def maml_loss(model: nn.Module, support_x, support_y, query_x, query_y, lr: float, steps: int) -> torch.Tensor:
    """Mean over tasks (dim 0 of every argument) of the query loss after adapting to the
    support set. Differentiable with respect to model's parameters (second-order MAML)."""
    # TODO: start from the model's real parameters: the meta-gradient has to reach them.
    # TODO: per task, adapt on its support set, then score the ADAPTED parameters on its query
    #       set; return the mean over tasks as one scalar (do not call backward here). A Python
    #       loop over tasks works; vmap over the task dim is neater.
    raise NotImplementedError("TODO: implement maml_loss")
