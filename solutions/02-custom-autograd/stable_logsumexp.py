"""Reference solution: stable log-sum-exp over the last dim, with a twice-differentiable backward."""

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = x.amax(dim=-1, keepdim=True)  # key
        out = (m + (x - m).exp().sum(dim=-1, keepdim=True).log()).squeeze(-1)  # key
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, out = ctx.saved_tensors
        # softmax(x) = exp(x - logsumexp(x)): every exponent is <= 0, so nothing overflows.
        # Plain torch ops on saved tensors: autograd can differentiate this again.
        return grad_out.unsqueeze(-1) * (x - out.unsqueeze(-1)).exp()  # key


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(x))) over the last dimension, finite for any finite x."""
    return LogSumExp.apply(x)
