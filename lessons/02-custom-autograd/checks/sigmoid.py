"""Check: Sigmoid matches torch.sigmoid forward and backward (float32 and float64, odd, size-1
and non-contiguous shapes, saturated inputs at |x| = 100), saves its output itself (not the input,
not a copy), uses the incoming gradient, leaves x alone, and passes gradcheck."""

import torch
from torch.autograd.function import BackwardCFunction


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.Sigmoid, type) and issubclass(mine.Sigmoid, torch.autograd.Function),
               "Sigmoid must subclass torch.autograd.Function")

    # (shape, dtype, noncontiguous, saturated)
    cases = [((32, 10), torch.float32, False, False), ((7,), torch.float32, False, False),
             ((3, 5, 2), torch.float64, False, False), ((1, 1), torch.float32, False, False),
             ((9, 13), torch.float32, True, False), ((6, 5), torch.float32, False, True)]
    for trial in ctx.trials(len(cases)):
        shape, dtype, noncontiguous, saturated = cases[trial]
        if saturated:
            # Saturated inputs: the derivative is ~0 there and must come out as 0, not NaN.
            x = ctx.randn(*shape, scale=10.0) + 100.0 * torch.sign(ctx.randn(*shape))
            where = "for saturated inputs around +-100"
        else:
            x = ctx.randn(*shape, scale=4.0, dtype=dtype, noncontiguous=noncontiguous)
            where = f"for a {dtype} input".replace("torch.", "") if dtype != torch.float32 else ""
        x1 = x.detach().clone().requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        out = ctx.no_mutation(mine.sigmoid, x1)
        expected = torch.sigmoid(x2)
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   "sigmoid(x) must return the result of Sigmoid.apply(x), so autograd calls your backward")
        ctx.expect_close(f"output {where}".strip(), out, expected)

        saved = out.grad_fn.saved_tensors
        ctx.expect(len(saved) == 1, f"Sigmoid saved {len(saved)} tensors for backward: the output s "
                                    "alone is enough")
        same_values = saved[0].shape == out.shape and torch.equal(saved[0], out)
        ctx.expect(same_values, "Sigmoid saved a tensor that is not its output (the input x?): "
                                "backward can be written with s = sigmoid(x) alone, without another exp")
        # Identity, not just equal values: a copy doubles the memory that backward holds on to.
        ctx.expect(saved[0].data_ptr() == out.data_ptr(),
                   "Sigmoid saved a copy of its output (equal values, separate memory): save the "
                   "tensor forward returns, so backward holds no extra memory")

        g = ctx.randn(*shape, dtype=dtype)
        out.backward(g)
        expected.backward(g)
        ctx.expect_finite(f"gradient of x {where}".strip(), x1.grad)
        ctx.expect_close(f"gradient of x {where}".strip(), x1.grad, x2.grad)

    ctx.gradcheck("sigmoid", mine.sigmoid, [ctx.randn(4, 3, dtype=torch.float64, requires_grad=True)])
