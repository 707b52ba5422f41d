"""RIGHT: defines "inside the range" as the elements the clamp left unchanged (q == clamp(q)) and zeroes the rest with an out-of-place masked_fill, instead of comparing q with qmin and qmax."""

import torch


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        q = (x / scale).round()
        clamped = q.clamp(qmin, qmax)
        ctx.save_for_backward(clamped == q)
        return clamped.mul(scale)

    @staticmethod
    def backward(ctx, grad_out):
        (unclipped,) = ctx.saved_tensors
        return grad_out.masked_fill(~unclipped, 0.0), None, None, None


def fake_quant(x: torch.Tensor, scale: float, qmin: int = -128, qmax: int = 127) -> torch.Tensor:
    return FakeQuantSTE.apply(x, scale, qmin, qmax)
