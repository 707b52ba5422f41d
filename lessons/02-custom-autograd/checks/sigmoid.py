"""Check: the learner's Sigmoid matches torch.sigmoid forward and backward, and passes gradcheck."""

import torch


def check(ctx):
    mine = ctx.learner
    for trial in ctx.trials(4):
        shape = ctx.choice([(32, 10), (7,), (3, 5, 2), (1, 1)])
        x = ctx.randn(*shape, scale=4.0, noncontiguous=(trial == 3 and len(shape) > 1))
        x1 = x.detach().clone().requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        out = ctx.no_mutation(mine.sigmoid, x1)
        expected = torch.sigmoid(x2)
        ctx.expect_close("output", out, expected)
        g = ctx.randn(*shape)
        out.backward(g)
        expected.backward(g)
        ctx.expect_close("gradient of x", x1.grad, x2.grad)
    ctx.expect(isinstance(mine.Sigmoid, type) and issubclass(mine.Sigmoid, torch.autograd.Function),
               "Sigmoid must subclass torch.autograd.Function")
    ctx.gradcheck("sigmoid", mine.sigmoid, [ctx.randn(4, 3, dtype=torch.float64, requires_grad=True)])
    x = ctx.randn(256, 256)
    ctx.time(lambda: mine.sigmoid(x), lambda: ctx.reference.sigmoid(x))
