"""WRONG: does the division and rounding in float64 "for accuracy" and casts back, so float32 inputs near half steps round differently from the float32 formula (guide: "the formula, in the dtype of x"; the check compares the output exactly)."""

import torch


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        q = torch.round(x.double() / scale)
        inside = (q >= qmin) & (q <= qmax)
        ctx.save_for_backward(inside)
        return (q.clamp(qmin, qmax) * scale).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        (inside,) = ctx.saved_tensors
        return grad_out * inside, None, None, None


def fake_quant(x: torch.Tensor, scale: float, qmin: int = -128, qmax: int = 127) -> torch.Tensor:
    return FakeQuantSTE.apply(x, scale, qmin, qmax)
