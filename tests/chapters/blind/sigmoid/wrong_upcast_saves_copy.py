"""WRONG: computes in at least float32 "for accuracy" and returns a cast, so for float16/bfloat16 inputs the saved tensor is a float32 copy, not the returned output (stub: "keep the output itself, not the input and not a copy")."""

import torch


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        work_dtype = torch.promote_types(x.dtype, torch.float32)
        s = torch.sigmoid(x.to(work_dtype))
        ctx.save_for_backward(s)
        return s.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return (grad_out * s * (1 - s)).to(grad_out.dtype)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return Sigmoid.apply(x)
