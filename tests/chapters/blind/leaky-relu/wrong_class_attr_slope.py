"""WRONG: keeps the slope on the Function class instead of on ctx, so two interleaved calls with different slopes share it and the first call's backward uses the second call's slope (guide: ctx "carries state from forward to backward for that one call, so two calls ... never share state")."""

import torch


class LeakyReLU(torch.autograd.Function):
    negative_slope = 0.01

    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        LeakyReLU.negative_slope = negative_slope
        return torch.where(x > 0, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.where(x > 0, grad_out, grad_out * LeakyReLU.negative_slope)
        return grad_x, None


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
