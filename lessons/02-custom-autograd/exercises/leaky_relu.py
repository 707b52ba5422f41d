"""Exercise: leaky ReLU as a custom autograd Function with a non-tensor argument.

    leaky_relu(x) = x                    where x > 0
                    negative_slope * x   elsewhere (x = 0 included)

`negative_slope` is a plain Python float, not a tensor.
"""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        # TODO: keep for backward what it needs: the input tensor, and the slope (a float, which
        #       ctx.save_for_backward does not accept).
        # TODO: return leaky_relu(x) as a new tensor: the caller may still need x unchanged.
        raise NotImplementedError("TODO: implement LeakyReLU.forward")

    @staticmethod
    def backward(ctx, grad_out):
        # TODO: return one value per input of forward. What is the local slope at x = 0 exactly?
        #       And what gradient can a Python float receive?
        raise NotImplementedError("TODO: implement LeakyReLU.backward")


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
