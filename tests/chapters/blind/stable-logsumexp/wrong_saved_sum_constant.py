"""WRONG: saves the shifted exponentials and their sum (intermediates computed in forward without recording) and builds the gradient from them, so the first derivative is right but the second derivative loses the dependence of the sum on x (guide: backward "silently stops being right when [it] uses a tensor computed in forward")."""

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = x.amax(dim=-1, keepdim=True)
        e = (x - m).exp()
        s = e.sum(dim=-1, keepdim=True)
        ctx.save_for_backward(x, m, s)
        return (m + s.log()).squeeze(-1)

    @staticmethod
    def backward(ctx, grad_out):
        x, m, s = ctx.saved_tensors
        return grad_out.unsqueeze(-1) * (x - m).exp() / s


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(x))) over the last dimension, finite for any finite x."""
    return LogSumExp.apply(x)
