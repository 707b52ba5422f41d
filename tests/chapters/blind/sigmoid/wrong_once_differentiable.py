"""WRONG: decorates a perfectly differentiable backward with @once_differentiable, so double backward (create_graph=True) raises, which the guide forbids ("Never put it on a backward that is differentiable: it throws away double backward for nothing")."""

import torch
from torch.autograd.function import once_differentiable


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return grad_out * s * (1 - s)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return Sigmoid.apply(x)
