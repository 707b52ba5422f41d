"""Check: LogCosh (setup_context form) matches log(cosh(x)) computed stably in float64, with the
gradient tanh(x), through ordinary autograd (float32 and float64, odd, size-1, non-contiguous
shapes, exact zeros, |x| around 100 where cosh overflows in float32), leaves its inputs and the
incoming gradient alone, passes gradcheck; then runs under torch.func: grad alone, vmap alone,
and vmap(grad(...)) per-sample gradients of a linear model's log-cosh loss, compared with plain
autograd run sample by sample in float64."""

import math

import torch
from _second_order import expect_second_derivative
from torch.autograd.function import BackwardCFunction
from torch.func import grad, vmap

LOG2 = math.log(2.0)


def _truth(x):
    """log(cosh(x)) in float64, stable for any finite x."""
    x = x.double()
    return torch.logaddexp(x, -x) - LOG2


def _explain(ctx, exc):
    """Turn the errors torch raises for the usual mistakes into one line that says the fix."""
    text = str(exc)
    first = [text.splitlines()[0]] if text else []
    if isinstance(exc, TypeError) and "required" in text and "argument" in text:
        ctx.fail(ctx.t("LogCosh.apply(x) did not reach your forward with the right arguments: in the "
                       "setup_context form forward takes only the inputs ({form}) and saves nothing; "
                       "setup_context(ctx, inputs, output) does the saving", form="def forward(x)"), first)
    if "setup_context" in text:
        ctx.fail(ctx.t("torch.func refuses LogCosh because its forward takes ctx ({form}): under grad and "
                       "vmap forward must only compute. Drop ctx from forward and move what it stored into "
                       "a staticmethod setup_context(ctx, inputs, output)", form="forward(ctx, x)"), first)
    if "vmap support" in text or "generate_vmap_rule" in text:
        ctx.fail(ctx.t("vmap does not know how to batch LogCosh: set {attr} on the class (its forward and "
                       "backward are plain torch ops) or write a vmap staticmethod",
                       attr="generate_vmap_rule = True"), first)
    if "data-dependent control flow" in text:
        ctx.fail(ctx.t("vmap cannot run a Python if (or .item()) on tensor values inside LogCosh: under vmap "
                       "one call holds the whole batch. Use one formula that is right for every x, or "
                       "torch.where"), first)
    if "written-to tensor" in text or "in-place operation" in text:
        ctx.fail(ctx.t("an in-place operation in LogCosh failed under torch.func: backward must build a "
                       "new tensor, not write into grad_out or a saved input"), first)
    raise exc


def _call(ctx, fn, *args):
    try:
        return fn(*args)
    except (TypeError, RuntimeError) as exc:
        _explain(ctx, exc)


def _autograd_trial(ctx, mine, shape, dtype, noncontiguous, big):
    """One input through ordinary autograd: value, gradient, and the inputs left alone."""
    x = ctx.randn(*shape, scale=3.0, dtype=dtype, noncontiguous=noncontiguous)
    if big and dtype == torch.float16:
        # Not near 0: there |x| - log 2 + log1p(...) cancels to float16's resolution of 0.69.
        x = x.clamp(-8.0, 8.0) + 15.0 * torch.sign(ctx.randn(*shape)).to(dtype)  # 7 <= |x| <= 23
        where = ctx.t("for float16 inputs around +-15 (cosh overflows there in float16)")
    elif big:
        x = x + 100.0 * torch.sign(ctx.randn(*shape))
        where = ctx.t("for inputs around +-100 (cosh overflows there in float32)")
    else:
        x.masked_fill_((torch.arange(x.numel()) % 4 == 0).reshape(shape), 0.0)  # exact zeros; keeps strides
        where = ctx.t("for a {dtype} input", dtype="float64") if dtype == torch.float64 else ""
    output = ctx.t("{label} {where}", label="output", where=where) if where else "output"
    gradient = ctx.t("{label} {where}", label="gradient of x", where=where) if where else "gradient of x"

    # Without a gradient wanted: forward alone must leave x as it was.
    ctx.no_mutation(lambda t: _call(ctx, mine.log_cosh, t), x.detach().clone())
    x1 = x.detach().clone().requires_grad_()
    out = _call(ctx, mine.log_cosh, x1)
    ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
               ctx.t("{fn} must return the result of {apply}, so autograd calls your backward",
                     fn="log_cosh(x)", apply="LogCosh.apply(x)"))
    ctx.expect_finite(output, out)
    ctx.expect_close(output, out, _truth(x).to(dtype))
    g = ctx.randn(*shape, dtype=dtype)
    g_before = g.clone()
    _call(ctx, out.backward, g)
    ctx.expect(torch.equal(x1.detach(), x),
               ctx.t("your backward changed the saved input x in place: build the gradient as a new tensor"))
    ctx.expect(torch.equal(g, g_before),
               ctx.t("your backward changed grad_out in place: autograd may still need it (and under "
                     "torch.func it is often a broadcast view that cannot be written): return a new tensor"))
    ctx.expect_finite(gradient, x1.grad)
    ctx.expect_close(gradient, x1.grad, (g.double() * torch.tanh(x.double())).to(dtype))


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.LogCosh, type) and issubclass(mine.LogCosh, torch.autograd.Function),
               ctx.t("{name} must subclass torch.autograd.Function", name="LogCosh"))

    # -- ordinary autograd: loss.backward() still works -----------------------------------------
    # (shape, dtype, noncontiguous, big): big puts |x| near 100, where cosh(x) is inf in float32
    # (and, for float16 below, near 15, where cosh(x) is already inf: past about 11).
    cases = [((16, 5), torch.float32, False, False), ((7,), torch.float32, False, False),
             ((3, 4, 2), torch.float64, False, False), ((1, 1), torch.float32, False, False),
             ((9, 13), torch.float32, True, False), ((6, 5), torch.float32, False, True)]
    for trial in ctx.trials(len(cases)):
        _autograd_trial(ctx, mine, *cases[trial])

    ctx.gradcheck("log_cosh", mine.log_cosh, [ctx.randn(4, 3, dtype=torch.float64, requires_grad=True)])

    # -- torch.func: grad, vmap, then per-sample gradients ---------------------------------------
    ctx.phase(ctx.t("checking under torch.func.grad and vmap"))
    x = ctx.randn(11, scale=3.0)
    gx = _call(ctx, grad(lambda t: mine.log_cosh(t).sum()), x)
    ctx.expect_close(ctx.t("torch.func.grad of log_cosh(x).sum()"), gx, torch.tanh(x.double()).float())

    xs = ctx.randn(5, 7, scale=3.0)
    ys = _call(ctx, vmap(mine.log_cosh), xs)
    ctx.expect_close(ctx.t("vmap(log_cosh) over a batch of 5 rows"), ys, _truth(xs).float())
    # Batched along another dimension: a vmap rule must say where the batch dimension of its output is.
    ys = _call(ctx, vmap(mine.log_cosh, in_dims=1), xs)
    ctx.expect_close(ctx.t("vmap(log_cosh, in_dims=1) over the 7 columns of a 5 x 7 input (the result is "
                           "7 x 5: a vmap staticmethod returns the output's batch dimension, in_dims[0] for "
                           "an elementwise Function)"), ys, _truth(xs).float().t())

    # Per-sample gradients of a linear model: loss_i = log_cosh(x_i @ w + b - y_i).sum().
    # Odd sizes, and targets far off for some samples so |residual| reaches ~100 (cosh overflows).
    n, d_in, d_out = 13, 6, 3
    w, b = ctx.randn(d_in, d_out), ctx.randn(d_out)
    xb, yb = ctx.randn(n, d_in, scale=2.0), ctx.randn(n, d_out, scale=2.0)
    yb[::4] += 100.0 * torch.sign(ctx.randn(len(yb[::4]), d_out))

    def loss(w, b, x, y):
        return mine.log_cosh(x @ w + b - y).sum()

    per_sample = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))
    gw, gb = _call(ctx, per_sample, w, b, xb, yb)
    # The reference: plain autograd, one sample at a time, in float64 with torch's own formula.
    ref_w, ref_b = [], []
    for i in range(n):
        w64, b64 = w.double().requires_grad_(), b.double().requires_grad_()
        li = _truth(xb[i].double() @ w64 + b64 - yb[i].double()).sum()
        dw, db = torch.autograd.grad(li, (w64, b64))
        ref_w.append(dw)
        ref_b.append(db)
    ctx.expect_close(ctx.t("per-sample gradients of the weight from vmap(grad(loss))"),
                     gw, torch.stack(ref_w).float(), atol=1e-4)
    ctx.expect_close(ctx.t("per-sample gradients of the bias from vmap(grad(loss))"),
                     gb, torch.stack(ref_b).float(), atol=1e-4)

    # float16, where cosh overflows already past |x| = 11: "finite for every finite x" is about the
    # formula, whatever the dtype. After torch.func, so a Python if on the values is named as such.
    _autograd_trial(ctx, mine, (6, 5), torch.float16, False, True)

    # Double backward (the stability page): a backward that detaches x or carries
    # @once_differentiable has the right gradient and a wrong (or no) second derivative.
    ctx.phase(ctx.t("checking second derivatives"))
    x = ctx.randn(3, 6, dtype=torch.float64, scale=2.0)
    expect_second_derivative(ctx, lambda t: _call(ctx, mine.log_cosh, t), lambda t: torch.logaddexp(t, -t) - LOG2,
                             x, ctx.randn(3, 6, dtype=torch.float64), ctx.randn(3, 6, dtype=torch.float64))

    # How much vmap buys over a Python loop of ordinary backward passes (reported, not judged).
    xt, yt = ctx.randn(256, d_in), ctx.randn(256, d_out)

    def loop():
        for i in range(len(xt)):
            wi = w.clone().requires_grad_()
            mine.log_cosh(xt[i] @ wi + b - yt[i]).sum().backward()

    ctx.time(lambda: per_sample(w, b, xt, yt), loop, name="per-sample gradients",
             label=ctx.t("per-sample gradients of {n} samples", n=len(xt)),
             compares=ctx.t("vmap(grad) vs a Python loop of backward passes"),
             sides=(ctx.t("vmap(grad)"), ctx.t("the loop")))
