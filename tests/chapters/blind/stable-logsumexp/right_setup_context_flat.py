"""RIGHT: uses the split forward/setup_context form, flattens the leading dimensions to one batch dimension with reshape and restores them, and skips backward work when no input gradient is needed."""

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        rows = x.reshape(-1, x.shape[-1])
        m = rows.amax(dim=1, keepdim=True)
        lse = m + torch.log((rows - m).exp().sum(dim=1, keepdim=True))
        return lse.reshape(x.shape[:-1])

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x, output)

    @staticmethod
    def backward(ctx, grad_out):
        if not ctx.needs_input_grad[0]:
            return None
        x, out = ctx.saved_tensors
        return torch.exp(x - out.unsqueeze(-1)) * grad_out.unsqueeze(-1)


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(x))) over the last dimension, finite for any finite x."""
    return LogSumExp.apply(x)
