"""WRONG: keeps the inside-the-range mask on the Function class rather than on ctx, so when two tensors are fake-quantized before one backward (e.g. weight and activation), the first one's gradient is masked with the second one's mask (ctx exists so that two calls never share state)."""

import torch


class FakeQuantSTE(torch.autograd.Function):
    _inside = None

    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        q = torch.round(x / scale)
        FakeQuantSTE._inside = (q >= qmin) & (q <= qmax)
        return q.clamp(qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * FakeQuantSTE._inside, None, None, None


def fake_quant(x: torch.Tensor, scale: float, qmin: int = -128, qmax: int = 127) -> torch.Tensor:
    return FakeQuantSTE.apply(x, scale, qmin, qmax)
