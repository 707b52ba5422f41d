"""Exercise: the straight-through estimator (STE) for rounding.

torch.round has derivative 0 almost everywhere, so no gradient reaches anything behind it.
The straight-through estimator rounds in forward and, in backward, passes the incoming
gradient through unchanged, as if rounding were the identity. It is how quantization-aware
training (chapter 11) trains weights that are rounded in the forward pass.
"""

import torch


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # TODO: return x rounded like torch.round (halves go to the even neighbour), same dtype
        raise NotImplementedError("TODO: implement RoundSTE.forward")

    @staticmethod
    def backward(ctx, grad_out):
        # TODO: the straight-through gradient: pass grad_out on unchanged
        raise NotImplementedError("TODO: implement RoundSTE.backward")


def round_ste(x: torch.Tensor) -> torch.Tensor:
    return RoundSTE.apply(x)
