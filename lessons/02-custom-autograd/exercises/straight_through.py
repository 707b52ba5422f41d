"""Exercise: fake quantization with a clipped straight-through gradient.

A quantizer maps x to one of the integers qmin..qmax (in units of `scale`) and back:

    fake_quant(x) = clamp(round(x / scale), qmin, qmax) * scale

It is how quantization-aware training (chapter 11) shows the network the values int8 (or
int4) can hold. Its true derivative is zero almost everywhere, so nothing behind it would
learn. The straight-through estimator replaces that derivative in backward, but only where
it makes sense: decide, for each element, whether the output would move if x moved a little.

`scale` is a positive float; `qmin` and `qmax` are Python ints.
"""

import torch


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        # TODO: the formula above, same dtype as x. Exact halves round to the even neighbour.
        # TODO: keep for backward what it needs to tell, element by element, which rule applies.
        raise NotImplementedError("TODO: implement FakeQuantSTE.forward")

    @staticmethod
    def backward(ctx, grad_out):
        # TODO: one value per input of forward. Rounding counts as the identity here; the clamp
        #       does not: where it cut the value off, what is the derivative? Watch out for the
        #       values that round exactly to qmin or qmax.
        raise NotImplementedError("TODO: implement FakeQuantSTE.backward")


def fake_quant(x: torch.Tensor, scale: float, qmin: int = -128, qmax: int = 127) -> torch.Tensor:
    return FakeQuantSTE.apply(x, scale, qmin, qmax)
