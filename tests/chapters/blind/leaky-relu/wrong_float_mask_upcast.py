"""WRONG: multiplies x by a float32 slope map built from (x > 0).float(), so float16/bfloat16 inputs come back as float32 instead of in their own dtype, unlike torch.nn.functional.leaky_relu."""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        positive = (x > 0).float()
        slope = positive + (1 - positive) * negative_slope
        ctx.save_for_backward(slope)
        return x * slope

    @staticmethod
    def backward(ctx, grad_out):
        (slope,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_out * slope
        return grad_x, None


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
