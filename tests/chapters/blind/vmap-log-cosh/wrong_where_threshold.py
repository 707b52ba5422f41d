"""WRONG: computes log(cosh(x)) literally and switches to |x| - log 2 past |x| = 20 with torch.where, so cosh still sees exp of a positive argument (guide: "find a way to write it in which no exp sees a positive argument") and float16 inputs with about 12 < |x| < 20 come out inf instead of finite."""

import math

import torch

LOG2 = math.log(2.0)


class LogCosh(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        a = x.abs()
        return torch.where(a < 20, torch.log(torch.cosh(x)), a - LOG2)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.tanh(x)


def log_cosh(x: torch.Tensor) -> torch.Tensor:
    return LogCosh.apply(x)
