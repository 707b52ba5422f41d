"""Reference solution: leaky ReLU with a non-tensor `negative_slope` that gets a None gradient."""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope  # key
        return torch.where(x > 0, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.where(x > 0, grad_out, grad_out * ctx.negative_slope)  # key
        return grad_x, None  # key


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
