"""RIGHT: uses the split forward/setup_context form (slope stored as a ctx attribute in setup_context) and selects with an inverted mask / Tensor.where instead of torch.where(x > 0, ...)."""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(x, negative_slope):
        non_positive = ~(x > 0)
        return torch.where(non_positive, x * negative_slope, x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, negative_slope = inputs
        ctx.save_for_backward(x)
        ctx.negative_slope = negative_slope

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_out.where(x > 0, grad_out * ctx.negative_slope)
        return grad_x, None


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
