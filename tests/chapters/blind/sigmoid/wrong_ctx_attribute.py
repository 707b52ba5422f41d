"""WRONG: keeps the output as a ctx attribute instead of ctx.save_for_backward, so autograd no longer detects an in-place change of the output before backward and returns a silently wrong gradient (guide: prefer save_for_backward to `ctx.x = x`, which gives "an error instead of a silently wrong gradient")."""

import torch


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.s = s
        return s

    @staticmethod
    def backward(ctx, grad_out):
        s = ctx.s
        return grad_out * s * (1 - s)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return Sigmoid.apply(x)
