"""Check: Sigmoid matches torch.sigmoid forward and backward (float32 and float64, odd, size-1
and non-contiguous shapes, saturated inputs at |x| = 100), saves its output itself (not the input,
not a copy), uses the incoming gradient, leaves x alone, and passes gradcheck."""

import torch
from torch.autograd.function import BackwardCFunction


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.Sigmoid, type) and issubclass(mine.Sigmoid, torch.autograd.Function),
               ctx.t("{name} must subclass torch.autograd.Function", name="Sigmoid"))

    # (shape, dtype, noncontiguous, saturated)
    cases = [((32, 10), torch.float32, False, False), ((7,), torch.float32, False, False),
             ((3, 5, 2), torch.float64, False, False), ((1, 1), torch.float32, False, False),
             ((9, 13), torch.float32, True, False), ((6, 5), torch.float32, False, True)]
    for trial in ctx.trials(len(cases)):
        shape, dtype, noncontiguous, saturated = cases[trial]
        if saturated:
            # Saturated inputs: the derivative is ~0 there and must come out as 0, not NaN.
            x = ctx.randn(*shape, scale=10.0) + 100.0 * torch.sign(ctx.randn(*shape))
            where = ctx.t("for saturated inputs around +-100")
        else:
            x = ctx.randn(*shape, scale=4.0, dtype=dtype, noncontiguous=noncontiguous)
            where = ctx.t("for a {dtype} input", dtype="float64") if dtype == torch.float64 else ""
        output = ctx.t("{label} {where}", label="output", where=where) if where else "output"
        grad = ctx.t("{label} {where}", label="gradient of x", where=where) if where else "gradient of x"
        x1 = x.detach().clone().requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        out = ctx.no_mutation(mine.sigmoid, x1)
        expected = torch.sigmoid(x2)
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   ctx.t("{fn} must return the result of {apply}, so autograd calls your backward",
                         fn="sigmoid(x)", apply="Sigmoid.apply(x)"))
        ctx.expect_close(output, out, expected)

        saved = out.grad_fn.saved_tensors
        ctx.expect(len(saved) == 1, ctx.t("Sigmoid saved {n} tensors for backward: the output s alone is enough",
                                          n=len(saved)))
        same_values = saved[0].shape == out.shape and torch.equal(saved[0], out)
        ctx.expect(same_values, ctx.t("Sigmoid saved a tensor that is not its output (the input x?): "
                                      "backward can be written with s = sigmoid(x) alone, without another exp"))
        # Identity, not just equal values: a copy doubles the memory that backward holds on to.
        ctx.expect(saved[0].data_ptr() == out.data_ptr(),
                   ctx.t("Sigmoid saved a copy of its output (equal values, separate memory): save the "
                         "tensor forward returns, so backward holds no extra memory"))

        g = ctx.randn(*shape, dtype=dtype)
        out.backward(g)
        expected.backward(g)
        ctx.expect_finite(grad, x1.grad)
        ctx.expect_close(grad, x1.grad, x2.grad)

    ctx.gradcheck("sigmoid", mine.sigmoid, [ctx.randn(4, 3, dtype=torch.float64, requires_grad=True)])
