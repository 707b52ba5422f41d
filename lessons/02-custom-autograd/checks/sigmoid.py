"""Check: Sigmoid matches torch.sigmoid forward and backward (float32, float64 and bfloat16, odd,
size-1 and non-contiguous shapes, saturated inputs at |x| = 100), saves its output itself (not the
input, not a copy, not an upcast), uses the incoming gradient, leaves x alone, keeps its backward
differentiable (a second derivative) and passes gradcheck."""

import torch
from _second_order import expect_second_derivative
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


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.Sigmoid, type) and issubclass(mine.Sigmoid, torch.autograd.Function),
               ctx.t("{name} must subclass torch.autograd.Function", name="Sigmoid"))

    # (shape, dtype, noncontiguous, saturated)
    cases = [((32, 10), torch.float32, False, False), ((7,), torch.float32, False, False),
             ((3, 5, 2), torch.float64, False, False), ((1, 1), torch.float32, False, False),
             ((9, 13), torch.float32, True, False), ((6, 5), torch.float32, False, True),
             ((8, 7), torch.bfloat16, False, False)]
    for trial in ctx.trials(len(cases)):
        shape, dtype, noncontiguous, saturated = cases[trial]
        if saturated:
            # Saturated inputs: the derivative is ~0 there and must come out as 0, not NaN.
            x = ctx.randn(*shape, scale=10.0) + 100.0 * torch.sign(ctx.randn(*shape))
            where = ctx.t("for saturated inputs around +-100")
        else:
            x = ctx.randn(*shape, scale=4.0, dtype=dtype, noncontiguous=noncontiguous)
            where = (ctx.t("for a {dtype} input", dtype=str(dtype).replace("torch.", ""))
                     if dtype != torch.float32 else "")
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
        # An upcast (computing in float32 "for accuracy", returning a cast) saves another tensor.
        ctx.expect(saved[0].dtype == out.dtype,
                   ctx.t("for a {dtype} input Sigmoid saved a {saved} tensor while it returns {dtype}: save "
                         "the tensor forward returns, not a copy in another dtype",
                         dtype=str(out.dtype).replace("torch.", ""), saved=str(saved[0].dtype).replace("torch.", "")))
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
        # In bfloat16, 1 - s keeps only a few bits where s is near 1: a correct backward built on an
        # s one rounding away from torch.sigmoid's is off by ~0.005 there. That trial is about the
        # saved tensor's dtype; the others judge the values closely.
        tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
        ctx.expect_close(grad, x1.grad, x2.grad, **tol)

    # Double backward: the anatomy page's reason to save with save_for_backward. A backward that
    # detaches s, or carries @once_differentiable, has the right first derivative only.
    ctx.phase(ctx.t("checking second derivatives"))
    x = ctx.randn(3, 6, dtype=torch.float64, scale=3.0)
    expect_second_derivative(ctx, mine.sigmoid, torch.sigmoid, x, ctx.randn(3, 6, dtype=torch.float64),
                             ctx.randn(3, 6, dtype=torch.float64))

    # What any elementwise op promises beyond the drawn cases: expanded (stride-0) inputs and
    # incoming gradients, inf/-inf/NaN/1e30 values, a non-leaf input whose gradient reaches its
    # leaf, the same input twice and two calls before one backward.
    ctx.probe("sigmoid", lambda shape, dtype: (ctx.randn(*shape, dtype=dtype, scale=4.0),), truth=torch.sigmoid,
              expanded=True, extremes=True, nonleaf=True, expanded_grad=True, repeat=True)
    ctx.gradcheck("sigmoid", mine.sigmoid, [ctx.randn(4, 3, dtype=torch.float64, requires_grad=True)])

    # What saving the output buys (the page's point): the memory backward keeps, yours against
    # autograd's own graph of the formula on the same 256x256 float32 input (it keeps exp(-x)
    # and the sum as well).
    x = ctx.randn(256, 256)
    yours, _ = _kept_for_backward(lambda: mine.sigmoid(x.clone().requires_grad_()))
    formula, _ = _kept_for_backward(lambda: 1 / (1 + torch.exp(-x.clone().requires_grad_())))
    ctx.figure("kept_for_backward_bytes", yours,
               label=ctx.t("kept for backward by your Sigmoid (a 256×256 float32 input)"))
    ctx.figure("formula_kept_for_backward_bytes", formula,
               label=ctx.t("kept by autograd for {formula} on the same input", formula="1 / (1 + exp(-x))"))
