"""WRONG: backward takes tanh of the detached saved input, so the gradient is cut from the graph and a second derivative (torch.func.grad of grad, a Hessian, create_graph=True) silently comes out zero instead of 1 - tanh(x)**2 (guide: a backward "silently stops being right when [it] calls .detach()")."""

import math

import torch

LOG2 = math.log(2.0)


class LogCosh(torch.autograd.Function):
    generate_vmap_rule = True

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
        return grad_out * torch.tanh(x.detach())


def log_cosh(x: torch.Tensor) -> torch.Tensor:
    return LogCosh.apply(x)
