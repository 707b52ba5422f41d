"""WRONG: takes a fast path that returns x itself when no element is <= 0, so the output aliases the caller's input instead of being a new tensor (guide: "return the result as a new tensor ... the caller may still need it")."""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        if bool((x > 0).all()):
            return x
        return torch.where(x > 0, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.where(x > 0, grad_out, grad_out * ctx.negative_slope)
        return grad_x, None


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
