"""Exercise: log-cosh as an autograd Function that torch.func can transform.

    log_cosh(x) = log(cosh(x))      elementwise; its derivative is tanh(x)

A smooth regression loss: like x**2 / 2 near 0 and like |x| - log(2) far from it. Written
literally it breaks down where cosh overflows (|x| > ~89 in float32), although the answer is
an ordinary number there.

The Function must work in two worlds: with ordinary autograd (`loss.backward()`), and under
torch.func transforms. The check computes per-sample gradients of a linear model's loss with
`vmap(grad(loss))` through your Function and compares them with plain autograd run one
sample at a time.
"""

import torch


class LogCosh(torch.autograd.Function):
    # TODO: vmap must be able to batch this Function. Tell it how (the previous step shows two ways).

    @staticmethod
    def forward(x):
        # TODO: log(cosh(x)), finite for every finite x. Watch out: under torch.func, forward only
        #       computes. It gets no ctx, must not modify x, and cannot branch in Python on the
        #       values of x (under vmap one call holds the whole batch).
        raise NotImplementedError("TODO: implement LogCosh.forward")

    @staticmethod
    def setup_context(ctx, inputs, output):
        # TODO: keep for backward what it needs, from the inputs (a tuple) or the output.
        raise NotImplementedError("TODO: implement LogCosh.setup_context")

    @staticmethod
    def backward(ctx, grad_out):
        # TODO: the gradient with respect to x, as a new tensor (grad_out and the saved tensors
        #       stay as they are).
        raise NotImplementedError("TODO: implement LogCosh.backward")


def log_cosh(x: torch.Tensor) -> torch.Tensor:
    return LogCosh.apply(x)
