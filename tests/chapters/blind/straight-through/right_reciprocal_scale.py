"""RIGHT: multiplies by a precomputed 1/scale instead of dividing by scale, as torch.fake_quantize_per_tensor_affine itself does (x * inv_scale); the guide's formula clamp(round(x / scale), qmin, qmax) * scale does not fix how the float32 quotient is formed, so this counts as the formula in the dtype of x (moved from wrong_: one rounding of the quotient is not a broken task sentence)."""

import torch


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        inv_scale = 1.0 / scale
        q = torch.round(x * inv_scale)
        inside = (q >= qmin) & (q <= qmax)
        ctx.save_for_backward(inside)
        return q.clamp(qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_out):
        (inside,) = ctx.saved_tensors
        return grad_out * inside, None, None, None


def fake_quant(x: torch.Tensor, scale: float, qmin: int = -128, qmax: int = 127) -> torch.Tensor:
    return FakeQuantSTE.apply(x, scale, qmin, qmax)
