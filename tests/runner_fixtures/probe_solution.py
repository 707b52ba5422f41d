"""The reference of the probe tests: softplus as a custom autograd Function that torch.func
can transform (setup_context, generate_vmap_rule) and differentiate twice."""

import torch
import torch.nn.functional as F


class SoftPlus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return F.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return SoftPlus.apply(x)
