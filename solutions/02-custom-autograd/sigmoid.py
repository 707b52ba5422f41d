"""Reference solution: sigmoid as a custom autograd Function that reuses its forward output."""

import torch


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)  # key
        return s

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return grad_out * s * (1 - s)  # key


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return Sigmoid.apply(x)
