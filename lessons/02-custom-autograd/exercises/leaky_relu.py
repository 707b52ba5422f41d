"""Exercise: leaky ReLU as a custom autograd Function with a non-tensor argument.

    leaky_relu(x) = x                    where x > 0
                    negative_slope * x   elsewhere

`negative_slope` is a plain Python float. autograd wants one gradient per input of forward
(after ctx), so backward returns two values: the gradient for x, and None for negative_slope.
"""

import torch


class LeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        # TODO: save x for backward (ctx.save_for_backward takes tensors only)
        # TODO: keep negative_slope on ctx as a plain attribute, e.g. ctx.negative_slope = ...
        # TODO: return x where x > 0, negative_slope * x elsewhere (torch.where), without changing x
        raise NotImplementedError("TODO: implement LeakyReLU.forward")

    @staticmethod
    def backward(ctx, grad_out):
        # TODO: the local slope is 1 where x > 0, negative_slope elsewhere
        # TODO: return one value per forward input: (gradient for x, None for negative_slope)
        raise NotImplementedError("TODO: implement LeakyReLU.backward")


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    return LeakyReLU.apply(x, negative_slope)
