"""WRONG: backward detaches the saved output before using it, so the gradient is silently cut from the graph and double backward / gradgradcheck returns a wrong (zero-curvature) second derivative (guide: backward "silently stops being right when [it] calls .detach()")."""

import torch


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        s = s.detach()
        return grad_out * s * (1 - s)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return Sigmoid.apply(x)
