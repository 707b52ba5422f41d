"""Reference solution: round in forward, identity gradient in backward."""

import torch


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)  # key: nothing to save, backward does not depend on x

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out  # key: straight through, as if forward were the identity


def round_ste(x: torch.Tensor) -> torch.Tensor:
    return RoundSTE.apply(x)
