"""Check: Sigmoid matches torch.sigmoid forward and backward (also at |x| = 100, where
recomputing exp(-x) in float32 overflows), saves only its output, and passes gradcheck."""

import torch
from torch.autograd.function import BackwardCFunction


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.Sigmoid, type) and issubclass(mine.Sigmoid, torch.autograd.Function),
               "Sigmoid must subclass torch.autograd.Function")

    shapes = [(32, 10), (7,), (3, 5, 2), (1, 1), (9, 13)]
    for trial in ctx.trials(5):
        shape = shapes[trial]
        if trial == 4:
            # Saturated inputs: the derivative is ~0 there and must come out as 0, not NaN.
            x = ctx.randn(*shape, scale=10.0) + 100.0 * torch.sign(ctx.randn(*shape))
        else:
            x = ctx.randn(*shape, scale=4.0, noncontiguous=(trial == 3))
        x1 = x.detach().clone().requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        out = ctx.no_mutation(mine.sigmoid, x1)
        expected = torch.sigmoid(x2)
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   "sigmoid(x) must return the result of Sigmoid.apply(x), so autograd calls your backward")
        ctx.expect_close("output", out, expected)

        saved = out.grad_fn.saved_tensors
        ctx.expect(len(saved) == 1, f"Sigmoid saved {len(saved)} tensors for backward: save only its "
                                    "output s, with ctx.save_for_backward(s)")
        ctx.expect(saved[0].shape == out.shape and torch.equal(saved[0], out),
                   "Sigmoid saved a tensor that is not its output (the input x?): save s = sigmoid(x) "
                   "with ctx.save_for_backward(s), so backward reuses it instead of recomputing exp")

        g = ctx.randn(*shape)
        out.backward(g)
        expected.backward(g)
        ctx.expect_finite("gradient of x", x1.grad)
        ctx.expect_close("gradient of x", x1.grad, x2.grad)

    ctx.gradcheck("sigmoid", mine.sigmoid, [ctx.randn(4, 3, dtype=torch.float64, requires_grad=True)])
