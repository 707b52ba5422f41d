"""WRONG: computes the forward as torch.maximum(x, negative_slope * x), which equals leaky_relu only while negative_slope <= 1; for a slope above 1 (any Python float is legal) positive x comes out as negative_slope * x instead of x."""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope
        return torch.maximum(x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.where(x > 0, grad_out, grad_out * ctx.negative_slope)
        return grad_x, None


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
