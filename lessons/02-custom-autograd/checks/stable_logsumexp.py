"""Check: LogSumExp matches logsumexp over the last dim (computed in float64) in value,
gradient and second derivative; stays finite around |x| = 1000 where the naive formula
overflows, and for rows at very different levels (one max per row, not one for the tensor);
keeps float64 as float64; is written by hand; passes gradcheck and gradgradcheck."""

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
               ctx.t("{name} must subclass torch.autograd.Function", name="LogSumExp"))

    with _Calls() as calls:
        mine.logsumexp(ctx.randn(3, 4))
    used = sorted(n for n in calls.names if any(s in n for s in _SHORTCUTS))
    ctx.expect(not used, ctx.t("your forward calls {names}: write the max-subtraction yourself ({code})",
                               names=", ".join(used), code="m = x.amax(-1, keepdim=True); m + log(sum(exp(x - m)))"))

    # (shape, spread, offset, dtype, noncontiguous): offsets of +-1000 are where exp() overflows
    # or underflows; "rows" puts each row at its own offset (-1000, 0, +1000, +500), so one max
    # for the whole tensor instead of one per row underflows the rows far below it.
    cases = [((4, 7), 1.0, 0.0, torch.float32, False), ((5,), 3.0, 1000.0, torch.float32, False),
             ((2, 3, 9), 2.0, -1000.0, torch.float32, False), ((6, 1), 1.0, 1000.0, torch.float32, False),
             ((3, 11), 400.0, 0.0, torch.float32, False), ((4, 7), 2.0, "rows", torch.float32, False),
             ((5, 8), 3.0, 0.0, torch.float64, False), ((6, 9), 2.0, 1000.0, torch.float32, True),
             ((1, 3, 1, 6), 2.0, 0.0, torch.float32, False)]  # size-1 dims before the last: only it goes
    for trial in ctx.trials(len(cases)):
        shape, spread, offset, dtype, noncontiguous = cases[trial]
        x = ctx.randn(*shape, scale=spread, dtype=dtype, noncontiguous=noncontiguous)
        if offset == "rows":
            x = x + torch.tensor([-1000.0, 0.0, 1000.0, 500.0], dtype=dtype).unsqueeze(-1)
            where = ctx.t("for rows at very different levels ({levels})", levels="-1000, 0, +1000, +500")
        else:
            x = x + offset  # keeps the strides
            where = (ctx.t("for inputs around {offset:+g}", offset=offset) if offset
                     else ctx.t("for inputs spread over +-{spread:g}", spread=spread))
        if dtype != torch.float32:
            where = ctx.t("{where} (a {dtype} input)", where=where, dtype=str(dtype).replace("torch.", ""))
        if noncontiguous:
            where = ctx.t("{where} (a non-contiguous input)", where=where)
        if 1 in shape[:-1]:
            where = ctx.t("{where} (an input of shape {shape}: only the last dimension is removed)",
                          where=where, shape=tuple(shape))
        output = ctx.t("{label} {where}", label="output", where=where)
        grad = ctx.t("{label} {where}", label="gradient of x", where=where)
        x1 = x.detach().clone().requires_grad_()  # clone keeps the strides
        # The truth in float64: a float32 gradient with its own max subtraction is closer to it
        # than torch.logsumexp's own float32 gradient (off by ~6e-5 at |x| = 1000).
        x2 = x.detach().double().requires_grad_()
        out = ctx.no_mutation(mine.logsumexp, x1)
        truth = torch.logsumexp(x2, dim=-1)
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   ctx.t("{fn} must return the result of {apply}", fn="logsumexp", apply="LogSumExp.apply(x)"))
        ctx.expect_finite(output, out)
        ctx.expect_close(output, out, truth.detach().to(dtype))
        g = ctx.randn(truth.numel(), dtype=dtype).reshape(truth.shape)  # may be 0-d
        out.backward(g)
        truth.backward(g.double())
        ctx.expect_finite(grad, x1.grad)
        # x - logsumexp(x) cannot be closer than a few ulps of |x| in the input's dtype.
        atol = max(1e-5, 3 * torch.finfo(dtype).eps * float(x.abs().max()))
        ctx.expect_close(grad, x1.grad, x2.grad.to(dtype), atol=atol)

    # Second derivatives: differentiate the gradient once more (a Hessian-vector product).
    ctx.phase(ctx.t("checking second derivatives"))
    x = ctx.randn(3, 6, dtype=torch.float64)
    g, v = ctx.randn(3, dtype=torch.float64), ctx.randn(3, 6, dtype=torch.float64)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    (gx,) = torch.autograd.grad(mine.logsumexp(x1), x1, g, create_graph=True)
    ctx.expect(gx.grad_fn is not None,
               ctx.t("the gradient your backward returns is not differentiable (no graph behind it), so "
                     "second derivatives are wrong: build it from torch ops on ctx.saved_tensors, without "
                     "@once_differentiable, .detach(), torch.no_grad() or values computed in forward"))
    try:
        (hv,) = torch.autograd.grad(gx, x1, v, allow_unused=True)
    except RuntimeError as exc:
        ctx.fail(ctx.t("differentiating your backward failed (remove @once_differentiable: this "
                       "backward is made of differentiable torch ops)"), [str(exc).splitlines()[0]])
    (gx2,) = torch.autograd.grad(torch.logsumexp(x2, dim=-1), x2, g, create_graph=True)
    (hv2,) = torch.autograd.grad(gx2, x2, v)
    ctx.expect_close(ctx.t("second derivative (the gradient of your backward's result)"),
                     torch.zeros_like(hv2) if hv is None else hv, hv2)

    ctx.gradcheck("logsumexp", mine.logsumexp,
                  [ctx.randn(3, 5, dtype=torch.float64, requires_grad=True)], second_order=True)

    # The point of the max shift, as numbers: float32 exp overflows past about 88.7, so the
    # formula log(sum(exp(x))) gives inf on a row of 1000s, and yours its true value.
    big = torch.full((1, 4), 1000.0)
    ctx.figure("yours_at_1000_minus_1000", round(float(mine.logsumexp(big)[0]) - 1000.0, 4),
               label=ctx.t("yours on a float32 row of four 1000s, minus 1000 (log 4 = 1.386; {formula} gives {naive})",
                           formula="log(sum(exp(x)))", naive=str(float(big.exp().sum(dim=-1).log()[0]))))
