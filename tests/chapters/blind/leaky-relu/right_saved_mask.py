"""RIGHT: saves only the boolean mask x > 0 (a quarter of the memory of a float32 x) instead of x itself, and rebuilds the local slope from it in backward."""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        positive = x > 0
        ctx.save_for_backward(positive)
        ctx.negative_slope = float(negative_slope)
        return torch.where(positive, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad_out):
        if not ctx.needs_input_grad[0]:
            return None, None
        (positive,) = ctx.saved_tensors
        return torch.where(positive, grad_out, grad_out * ctx.negative_slope), None


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
