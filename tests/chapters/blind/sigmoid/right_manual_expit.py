"""RIGHT: computes the sigmoid by hand as reciprocal(exp(-x) + 1) instead of calling torch.sigmoid (it saturates to exactly 0 or 1, never NaN), with the same saved-output backward written as separate ops."""

import torch


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.reciprocal(torch.exp(-x) + 1)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        one_minus = 1 - s
        return torch.mul(grad_out, s.mul(one_minus))


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return Sigmoid.apply(x)
