"""Check: LeakyReLU matches torch.nn.functional.leaky_relu forward and backward for random
slopes (and the default), returns None for `negative_slope`, leaves x alone, passes gradcheck."""

import torch
import torch.nn.functional as F
from torch.autograd.function import BackwardCFunction


def _backward(ctx, out, g):
    """out.backward(g), turning autograd's complaints about the returned tuple into advice."""
    try:
        out.backward(g)
    except RuntimeError as exc:
        text = str(exc)
        if "incorrect number of gradients" in text:
            ctx.fail("backward must return one value per input of forward, here two: "
                     "`return grad_x, None` (None for negative_slope)", [text.splitlines()[0]])
        if "different than None" in text:
            ctx.fail("backward returned a gradient for negative_slope, a Python float: "
                     "autograd only accepts None there (`return grad_x, None`)", [text.splitlines()[0]])
        raise


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.LeakyReLU, type) and issubclass(mine.LeakyReLU, torch.autograd.Function),
               "LeakyReLU must subclass torch.autograd.Function")

    shapes = [(16, 10), (7,), (3, 5, 2), (1, 1), (9, 13)]
    for trial in ctx.trials(5):
        shape = shapes[trial]
        # A fresh slope per trial, in (0.01, 0.61); trial 3 uses the default argument.
        slope = round(0.01 + 0.6 * float(ctx.rand(1)), 4)
        x = ctx.randn(*shape, scale=3.0, noncontiguous=(trial == 4))
        x1 = x.detach().clone().requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        if trial == 3:
            out = ctx.no_mutation(mine.leaky_relu, x1)
            expected = F.leaky_relu(x2)
            where = "with the default negative_slope (0.01)"
        else:
            out = ctx.no_mutation(mine.leaky_relu, x1, slope)
            expected = F.leaky_relu(x2, slope)
            where = f"with negative_slope={slope}"
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   "leaky_relu must return the result of LeakyReLU.apply(x, negative_slope)")
        ctx.expect_close(f"output {where}", out, expected)
        g = ctx.randn(*shape)
        _backward(ctx, out, g)
        expected.backward(g)
        ctx.expect_close(f"gradient of x {where}", x1.grad, x2.grad)

    # No gradient wanted: forward still works and the result has no graph.
    x = ctx.randn(5, 4)
    out = mine.leaky_relu(x, 0.1)
    ctx.expect_close("output for an input that does not require grad", out, F.leaky_relu(x, 0.1))

    slope = round(0.05 + 0.3 * float(ctx.rand(1)), 4)
    ctx.gradcheck(f"leaky_relu with negative_slope={slope}", lambda t: mine.leaky_relu(t, slope),
                  [ctx.randn(4, 6, dtype=torch.float64, requires_grad=True)])
