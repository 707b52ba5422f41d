"""Check: LogSumExp matches torch.logsumexp(x, -1) in value, gradient and second derivative,
stays finite around |x| = 1000 where the naive formula overflows, is written by hand, and
passes gradcheck and gradgradcheck."""

import torch
from torch.autograd.function import BackwardCFunction
from torch.overrides import TorchFunctionMode

_SHORTCUTS = ("logsumexp", "softmax", "log_softmax", "softplus")


class _Calls(TorchFunctionMode):
    """Records the names of the torch functions called inside it."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.LogSumExp, type) and issubclass(mine.LogSumExp, torch.autograd.Function),
               "LogSumExp must subclass torch.autograd.Function")

    with _Calls() as calls:
        mine.logsumexp(ctx.randn(3, 4))
    used = sorted(n for n in calls.names if any(s in n for s in _SHORTCUTS))
    ctx.expect(not used, f"your forward calls {', '.join(used)}: write the max-subtraction yourself "
                         "(m = x.amax(-1, keepdim=True); m + log(sum(exp(x - m))))")

    # (shape, spread, offset): offsets of +-1000 are where exp() overflows or underflows.
    cases = [((4, 7), 1.0, 0.0), ((5,), 3.0, 1000.0), ((2, 3, 9), 2.0, -1000.0),
             ((6, 1), 1.0, 1000.0), ((3, 11), 400.0, 0.0)]
    for trial in ctx.trials(len(cases)):
        shape, spread, offset = cases[trial]
        x = ctx.randn(*shape, scale=spread) + offset
        where = f"for inputs around {offset:+g}" if offset else f"for inputs spread over +-{spread:g}"
        x1 = x.detach().clone().requires_grad_()
        x2 = x.detach().clone().requires_grad_()
        out = ctx.no_mutation(mine.logsumexp, x1)
        expected = torch.logsumexp(x2, dim=-1)
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   "logsumexp must return the result of LogSumExp.apply(x)")
        ctx.expect_finite(f"output {where}", out)
        ctx.expect_close(f"output {where}", out, expected)
        g = ctx.randn(expected.numel()).reshape(expected.shape)  # may be 0-d
        out.backward(g)
        expected.backward(g)
        ctx.expect_finite(f"gradient of x {where}", x1.grad)
        ctx.expect_close(f"gradient of x {where}", x1.grad, x2.grad)

    # Second derivatives: differentiate the gradient once more (a Hessian-vector product).
    ctx.phase("checking second derivatives")
    x = ctx.randn(3, 6, dtype=torch.float64)
    g, v = ctx.randn(3, dtype=torch.float64), ctx.randn(3, 6, dtype=torch.float64)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    (gx,) = torch.autograd.grad(mine.logsumexp(x1), x1, g, create_graph=True)
    ctx.expect(gx.grad_fn is not None,
               "the gradient your backward returns is not differentiable (no graph behind it), so "
               "second derivatives are wrong: build it from torch ops on ctx.saved_tensors, without "
               "@once_differentiable, .detach(), torch.no_grad() or values computed in forward")
    try:
        (hv,) = torch.autograd.grad(gx, x1, v, allow_unused=True)
    except RuntimeError as exc:
        ctx.fail("differentiating your backward failed (remove @once_differentiable: this "
                 "backward is made of differentiable torch ops)", [str(exc).splitlines()[0]])
    (gx2,) = torch.autograd.grad(torch.logsumexp(x2, dim=-1), x2, g, create_graph=True)
    (hv2,) = torch.autograd.grad(gx2, x2, v)
    ctx.expect_close("second derivative (the gradient of your backward's result)",
                     torch.zeros_like(hv2) if hv is None else hv, hv2)

    ctx.gradcheck("logsumexp", mine.logsumexp,
                  [ctx.randn(3, 5, dtype=torch.float64, requires_grad=True)], second_order=True)
