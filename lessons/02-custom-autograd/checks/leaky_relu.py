"""Check: LeakyReLU matches torch.nn.functional.leaky_relu forward and backward for random
slopes (and the default), float32 and float64, inputs with exact zeros, odd, size-1 and
non-contiguous shapes; returns None for `negative_slope`, leaves x alone, passes gradcheck."""

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
            ctx.fail(ctx.t("backward must return one value per input of forward, here two: "
                           "`{code}` (None for negative_slope)", code="return grad_x, None"),
                     [text.splitlines()[0]])
        if "different than None" in text:
            ctx.fail(ctx.t("backward returned a gradient for negative_slope, a Python float: "
                           "autograd only accepts None there (`{code}`)", code="return grad_x, None"),
                     [text.splitlines()[0]])
        raise


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.LeakyReLU, type) and issubclass(mine.LeakyReLU, torch.autograd.Function),
               ctx.t("{name} must subclass torch.autograd.Function", name="LeakyReLU"))

    # (shape, dtype, noncontiguous); trial 3 uses the default slope.
    cases = [((16, 10), torch.float32, False), ((7,), torch.float32, False),
             ((3, 5, 2), torch.float64, False), ((1, 1), torch.float32, False),
             ((9, 13), torch.float32, True)]
    for trial in ctx.trials(len(cases)):
        shape, dtype, noncontiguous = cases[trial]
        # A fresh slope per trial, in (0.05, 0.65): far from the default, so a hard-coded
        # 0.01 shows. Trial 3 uses the default argument.
        slope = round(0.05 + 0.6 * float(ctx.rand(1)), 4)
        x = ctx.randn(*shape, scale=3.0, dtype=dtype, noncontiguous=noncontiguous)
        # Exact zeros, where `x > 0` and `x >= 0` disagree: leaky_relu's slope there is negative_slope.
        x.masked_fill_((torch.arange(x.numel()) % 3 == 0).reshape(shape), 0.0)  # keeps the strides
        x1 = x.detach().clone().requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        if trial == 3:
            out = ctx.no_mutation(mine.leaky_relu, x1)
            expected = F.leaky_relu(x2)
            where = ctx.t("with the default negative_slope ({slope})", slope=0.01)
        else:
            out = ctx.no_mutation(mine.leaky_relu, x1, slope)
            expected = F.leaky_relu(x2, slope)
            if dtype == torch.float32:
                where = ctx.t("with negative_slope={slope}", slope=slope)
            else:
                where = ctx.t("with negative_slope={slope} (a {dtype} input)", slope=slope, dtype="float64")
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   ctx.t("{fn} must return the result of {apply}",
                         fn="leaky_relu", apply="LeakyReLU.apply(x, negative_slope)"))
        ctx.expect_close(ctx.t("{label} {where}", label="output", where=where), out, expected)
        g = ctx.randn(*shape, dtype=dtype)
        _backward(ctx, out, g)
        expected.backward(g)
        at_zero = x == 0
        ctx.expect_close(ctx.t("gradient of x {where}, where x == 0 exactly (leaky_relu's slope there is "
                               "negative_slope, as for x < 0)", where=where), x1.grad[at_zero], x2.grad[at_zero])
        ctx.expect_close(ctx.t("{label} {where}", label="gradient of x", where=where), x1.grad, x2.grad)

    # No gradient wanted: forward still works and the result has no graph.
    x = ctx.randn(5, 4)
    out = mine.leaky_relu(x, 0.1)
    ctx.expect_close(ctx.t("output for an input that does not require grad"), out, F.leaky_relu(x, 0.1))

    slope = round(0.05 + 0.3 * float(ctx.rand(1)), 4)
    ctx.gradcheck(f"leaky_relu with negative_slope={slope}", lambda t: mine.leaky_relu(t, slope),
                  [ctx.randn(4, 6, dtype=torch.float64, requires_grad=True)])
