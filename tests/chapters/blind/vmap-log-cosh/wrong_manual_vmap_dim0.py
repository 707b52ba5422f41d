"""WRONG: replaces generate_vmap_rule with a hand-written vmap staticmethod that always reports the output's batch dimension as 0, so vmap over any other dimension (in_dims=1, out_dims moved) returns transposed, wrong results (task: "let vmap batch the Function")."""

import math

import torch

LOG2 = math.log(2.0)


class LogCosh(torch.autograd.Function):
    @staticmethod
    def forward(x):
        a = x.abs()
        return a + torch.log1p(torch.exp(-2 * a)) - LOG2

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.tanh(x)

    @staticmethod
    def vmap(info, in_dims, x):
        # elementwise: run on the whole batch at once
        return LogCosh.apply(x), 0


def log_cosh(x: torch.Tensor) -> torch.Tensor:
    return LogCosh.apply(x)
