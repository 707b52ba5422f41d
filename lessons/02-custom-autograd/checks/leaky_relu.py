"""Check: LeakyReLU matches torch.nn.functional.leaky_relu forward and backward for random
slopes (and the default), float32 and float64, inputs with exact zeros, odd, size-1 and
non-contiguous shapes; returns None for `negative_slope`, leaves x alone, passes gradcheck."""

import torch
import torch.nn.functional as F
from torch.autograd.function import BackwardCFunction


def _kept_for_backward(fn):
    """(bytes of the tensors autograd keeps for backward while `fn()` runs, its result): each
    saved tensor counted once, by the memory it holds."""
    kept = {}

    def pack(t):
        kept[(t.data_ptr(), t.dtype, tuple(t.shape))] = t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(kept.values()), out


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

    # (shape, dtype, noncontiguous, kind); trial 3 uses the default slope. kind "steep" draws a
    # slope above 1 (any float is legal: max(x, slope * x) is leaky_relu only up to 1); "positive"
    # makes every x > 0, where the output equals x but must still be a new tensor.
    cases = [((16, 10), torch.float32, False, ""), ((7,), torch.float32, False, ""),
             ((3, 5, 2), torch.float64, False, ""), ((1, 1), torch.float32, False, ""),
             ((9, 13), torch.float32, True, ""), ((10, 6), torch.bfloat16, False, ""),
             ((6, 7), torch.float32, False, "steep"), ((5, 8), torch.float32, False, "positive")]
    for trial in ctx.trials(len(cases)):
        shape, dtype, noncontiguous, kind = cases[trial]
        # A fresh slope per trial, in (0.05, 0.65): far from the default, so a hard-coded
        # 0.01 shows. Trial 3 uses the default argument.
        slope = round(0.05 + 0.6 * float(ctx.rand(1)), 4)
        if kind == "steep":
            slope = round(1.5 + 1.5 * float(ctx.rand(1)), 4)
        x = ctx.randn(*shape, scale=3.0, dtype=dtype, noncontiguous=noncontiguous)
        if kind == "positive":
            x = x.abs() + 0.1
        else:
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
                where = ctx.t("with negative_slope={slope} (a {dtype} input)", slope=slope,
                              dtype=str(dtype).replace("torch.", ""))
            if kind == "positive":
                where = ctx.t("{where}, every x > 0", where=where)
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   ctx.t("{fn} must return the result of {apply}",
                         fn="leaky_relu", apply="LeakyReLU.apply(x, negative_slope)"))
        # A new tensor, not x under another name: writing into the result must not reach the caller's x.
        ctx.expect(out.untyped_storage().data_ptr() != x1.untyped_storage().data_ptr(),
                   ctx.t("leaky_relu {where} returned a tensor that shares memory with x: return the result "
                         "as a new tensor (the caller may still need x, and writing into the result would "
                         "change it)", where=where))
        ctx.expect_close(ctx.t("{label} {where}", label="output", where=where), out, expected)
        g = ctx.randn(*shape, dtype=dtype)
        _backward(ctx, out, g)
        expected.backward(g)
        at_zero = x == 0
        ctx.expect_close(ctx.t("gradient of x {where}, where x == 0 exactly (leaky_relu's slope there is "
                               "negative_slope, as for x < 0)", where=where), x1.grad[at_zero], x2.grad[at_zero])
        ctx.expect_close(ctx.t("{label} {where}", label="gradient of x", where=where), x1.grad, x2.grad)

    # Two calls before one backward (two layers with their own slopes): each backward must use its
    # own call's slope and tensors, kept on ctx, not state shared through the class.
    ctx.phase(ctx.t("checking two calls with different slopes before one backward"))
    slopes = (round(0.05 + 0.3 * float(ctx.rand(1)), 4), round(0.4 + 0.5 * float(ctx.rand(1)), 4))
    xs = [ctx.randn(6, 5, scale=3.0), ctx.randn(6, 5, scale=3.0)]
    gs = [ctx.randn(6, 5), ctx.randn(6, 5)]
    mine_x = [t.clone().requires_grad_() for t in xs]
    ref_x = [t.clone().requires_grad_() for t in xs]
    outs = [mine.leaky_relu(mine_x[i], slopes[i]) for i in range(2)]
    _backward(ctx, outs[0], gs[0])
    _backward(ctx, outs[1], gs[1])
    for i in range(2):
        F.leaky_relu(ref_x[i], slopes[i]).backward(gs[i])
        ctx.expect_close(ctx.t("gradient of x from call {n} of two made before either backward (negative_slope="
                               "{first}, then {second}): each call keeps its own slope and tensors on its ctx",
                               n=i + 1, first=slopes[0], second=slopes[1]),
                         mine_x[i].grad, ref_x[i].grad)

    # No gradient wanted: forward still works and the result has no graph.
    x = ctx.randn(5, 4)
    out = mine.leaky_relu(x, 0.1)
    ctx.expect_close(ctx.t("output for an input that does not require grad"), out, F.leaky_relu(x, 0.1))

    slope = round(0.05 + 0.3 * float(ctx.rand(1)), 4)
    # What any elementwise op promises beyond the drawn cases: expanded (stride-0) inputs and
    # incoming gradients, inf/-inf/NaN/1e30 values, a non-leaf input whose gradient reaches its
    # leaf, and the same input twice.
    ctx.probe("leaky_relu", lambda shape, dtype: (ctx.randn(*shape, dtype=dtype, scale=3.0), slope),
              truth=F.leaky_relu, expanded=True, extremes=True, nonleaf=True, expanded_grad=True, repeat=True)
    ctx.gradcheck(f"leaky_relu with negative_slope={slope}", lambda t: mine.leaky_relu(t, slope),
                  [ctx.randn(4, 6, dtype=torch.float64, requires_grad=True)])

    # The slope is a Python float kept on ctx: it costs backward no tensor memory. What backward
    # keeps is the tensor it reads the sign from; a bool mask (x > 0) would be a quarter of a
    # float32 x.
    x = ctx.randn(256, 256)
    yours, _ = _kept_for_backward(lambda: mine.leaky_relu(x.clone().requires_grad_(), slope))
    ctx.figure("kept_for_backward_bytes", yours,
               label=ctx.t("kept for backward by your LeakyReLU (a 256×256 float32 input)"))
    ctx.figure("mask_bytes", (x > 0).numel(),
               label=ctx.t("a bool mask {mask} of the same input, enough to tell the two slopes apart", mask="x > 0"))
