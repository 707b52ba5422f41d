"""WRONG: zeroes the clipped entries of grad_out in place and returns grad_out itself, so the caller's incoming gradient is overwritten, and an expanded gradient (y.sum().backward()) is zeroed everywhere as soon as one element is clipped; backward must build the gradient as a new tensor, not write into grad_out."""

import torch


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        q = torch.round(x / scale)
        inside = (q >= qmin) & (q <= qmax)
        ctx.save_for_backward(inside)
        return q.clamp(qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_out):
        (inside,) = ctx.saved_tensors
        return grad_out.masked_fill_(~inside, 0), None, None, None


def fake_quant(x: torch.Tensor, scale: float, qmin: int = -128, qmax: int = 127) -> torch.Tensor:
    return FakeQuantSTE.apply(x, scale, qmin, qmax)
