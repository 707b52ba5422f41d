"""WRONG: gets the value from the Tensor method x.logsumexp(-1) instead of writing the max trick (guide: "Write the max trick yourself: calling torch.logsumexp ... is rejected"), only the backward is hand-written."""

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.logsumexp(dim=-1)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, out = ctx.saved_tensors
        return grad_out.unsqueeze(-1) * (x - out.unsqueeze(-1)).exp()


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(x))) over the last dimension, finite for any finite x."""
    return LogSumExp.apply(x)
