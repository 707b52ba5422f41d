"""Check: FakeQuantSTE computes clamp(round(x / scale), qmin, qmax) * scale exactly (halves to
even, float64 kept, several scales and integer ranges, signed and unsigned); its gradient is the
incoming gradient where round(x / scale) lies in [qmin, qmax] (ends included) and zero where the
clamp cut the value off, tested on random inputs and on a grid of values at and around the
range's ends; None for scale, qmin and qmax; leaves x alone; is written by hand. Then it trains
weights through the quantizer towards targets partly out of range: the loss falls, and the
latent weights beyond the range stop instead of drifting away."""

import torch
from torch.autograd.function import BackwardCFunction
from torch.overrides import TorchFunctionMode


class _Calls(TorchFunctionMode):
    """Records the names of the torch functions called inside it."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def _backward(ctx, out, g):
    """out.backward(g), turning autograd's complaints about the returned tuple into advice."""
    try:
        out.backward(g)
    except RuntimeError as exc:
        text = str(exc)
        if "incorrect number of gradients" in text or "different than None" in text:
            ctx.fail(
                ctx.t(
                    "backward must return one value per input of forward: the gradient of x, then None "
                    "for each of scale, qmin and qmax (plain Python numbers get no gradient)"
                ),
                [text.splitlines()[0]],
            )
        raise


def _edges(scale, qmin, qmax, dtype):
    """Values at and around the range's ends, in units of scale: exact ends, a quarter and a
    half step on either side (the halves round to even), whole steps beyond; and every half
    step inside the range (2.5 rounds to 2, 3.5 to 4)."""
    ks = [k + 0.5 for k in range(qmin, qmax)]
    for end in (qmin, qmax):
        ks += [end + d for d in (-2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0)]
    return torch.tensor(ks, dtype=dtype) * scale


def _near_halves(scale, qmin, qmax, dtype):
    """Every half step from two below qmin to two above qmax, and the neighbouring representable
    numbers on either side: where round(x / scale) depends on the last bit of the quotient, so
    the formula computed in another dtype gives another integer."""
    ks = torch.tensor([k + 0.5 for k in range(qmin - 2, qmax + 2)], dtype=torch.float64)
    x = (ks * scale).to(dtype)
    return torch.cat([torch.nextafter(x, x - 1), x, torch.nextafter(x, x + 1)])


def check(ctx):
    mine = ctx.learner
    ctx.expect(
        isinstance(mine.FakeQuantSTE, type) and issubclass(mine.FakeQuantSTE, torch.autograd.Function),
        ctx.t("{name} must subclass torch.autograd.Function", name="FakeQuantSTE"),
    )
    with _Calls() as calls:
        mine.fake_quant(ctx.randn(3, 4), 0.25, -8, 7)
    used = sorted(n for n in calls.names if "fake_quant" in n)
    ctx.expect(
        not used, ctx.t("your forward calls {names}: write the rounding and the clamp yourself", names=", ".join(used))
    )

    # (shape, dtype, scale, qmin, qmax, noncontiguous). Scales are powers of two, so x / scale and
    # x * (1 / scale) are the same number and no rounding decision depends on how it is written.
    cases = [
        ((16, 10), torch.float32, 0.25, -8, 7, False),  # signed 4-bit
        ((7,), torch.float32, 0.5, 0, 15, False),  # unsigned 4-bit
        ((3, 5, 2), torch.float64, 0.125, -128, 127, False),  # int8, float64 in and out
        ((1, 1), torch.float32, 1.0, -2, 1, False),  # 2-bit
        ((9, 13), torch.float32, 0.0625, -4, 3, True),  # non-contiguous
        (None, torch.float32, 0.25, -8, 7, False),  # the grid at the ends of the range
        (None, torch.float32, 0.5, 0, 15, False),
        # Not a power of two, so the quotient is rounded: at 9 of these 57 values float64 arithmetic
        # picks another integer than the float32 formula. x * (1 / scale), which is how
        # torch.fake_quantize_per_tensor_affine computes it, agrees with x / scale on all of them.
        ("halves", torch.float32, 0.1, -8, 7, False),
    ]
    for trial in ctx.trials(len(cases)):
        shape, dtype, scale, qmin, qmax, noncontiguous = cases[trial]
        if shape is None:
            x = _edges(scale, qmin, qmax, dtype)
            where = ctx.t("for values at and around the ends of the range")
        elif shape == "halves":
            x = _near_halves(scale, qmin, qmax, dtype)
            where = ctx.t("for float32 values at and next to half steps: compute the formula in the dtype "
                          "of x, as the check does, not in float64")
        else:
            # Uniform over three steps beyond either end: about a third of the values get clipped.
            x = (qmin - 3 + ctx.rand(*shape, dtype=dtype) * (qmax - qmin + 6)) * scale
            if noncontiguous:
                x = x.t().contiguous().t()  # same values and shape, transposed strides
            where = ctx.t("for a {dtype} input", dtype="float64") if dtype == torch.float64 else ""
        setting = ctx.t(
            "scale={scale:g}, qmin={qmin}, qmax={qmax}{where}",
            scale=scale,
            qmin=qmin,
            qmax=qmax,
            where=(", " + where) if where else "",
        )
        q = torch.round(x / scale)
        inside = (q >= qmin) & (q <= qmax)
        at_ends = (q == qmin) | (q == qmax) | (q == qmin - 1) | (q == qmax + 1)
        expected = q.clamp(qmin, qmax) * scale

        x1 = x.detach().clone().requires_grad_()  # clone keeps the strides
        out = ctx.no_mutation(mine.fake_quant, x1, scale, qmin, qmax)
        ctx.expect(
            isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
            ctx.t(
                "{fn} must return the result of {apply}, so autograd calls your backward",
                fn="fake_quant",
                apply="FakeQuantSTE.apply(x, scale, qmin, qmax)",
            ),
        )
        ctx.expect_equal(ctx.t("fake-quantized output ({setting})", setting=setting), out, expected)
        g = ctx.randn(*x.shape, scale=2.0, dtype=dtype)
        _backward(ctx, out, g)
        grad = x1.grad
        ctx.expect(
            grad is not None, ctx.t("x got no gradient: fake_quant must pass a gradient back through FakeQuantSTE")
        )
        # Three regions, so the reason says which rule is broken.
        middle = inside & ~at_ends
        ctx.expect_close(
            ctx.t(
                "gradient of x where round(x / scale) lies inside the range ({setting}; straight-through: "
                "the incoming gradient, unchanged)",
                setting=setting,
            ),
            grad[middle],
            g[middle],
        )
        far = ~inside & ~at_ends
        ctx.expect_close(
            ctx.t(
                "gradient of x where the clamp cut the value off ({setting}; zero: the output does not "
                "move with x there)",
                setting=setting,
            ),
            grad[far],
            torch.zeros_like(g[far]),
        )
        ctx.expect_close(
            ctx.t(
                "gradient of x where round(x / scale) is qmin or qmax (passes: the clamp leaves those "
                "values alone) or one step beyond (zero) ({setting})",
                setting=setting,
            ),
            grad[at_ends],
            (g * inside)[at_ends],
        )

    # Two tensors fake-quantized before one backward (a weight and an activation): each backward
    # must use its own call's mask, kept on its ctx, not state shared through the class.
    ctx.phase(ctx.t("checking two calls before one backward"))
    settings = ((0.25, -8, 7), (0.5, 0, 15))
    xs = [(qmin - 3 + ctx.rand(6, 5) * (qmax - qmin + 6)) * scale for scale, qmin, qmax in settings]
    gs = [ctx.randn(6, 5), ctx.randn(6, 5)]
    leaves = [t.clone().requires_grad_() for t in xs]
    outs = [mine.fake_quant(leaves[i], *settings[i]) for i in range(2)]
    _backward(ctx, outs[0] * gs[0] + outs[1] * gs[1], torch.ones(6, 5))
    for i, (scale, qmin, qmax) in enumerate(settings):
        q = torch.round(xs[i] / scale)
        ctx.expect_close(
            ctx.t(
                "gradient of x from call {n} of two made before one backward (scale={first}, then {second}): "
                "each call keeps its own mask on its ctx",
                n=i + 1,
                first=settings[0][0],
                second=settings[1][0],
            ),
            leaves[i].grad,
            gs[i] * ((q >= qmin) & (q <= qmax)),
        )

    # The default range is int8's, [-128, 127]: a caller who passes only a scale gets it. Values
    # around both ends and one step past them, so a range off by one at either end shows.
    ctx.phase(ctx.t("checking the default range (int8: qmin=-128, qmax=127)"))
    steps = torch.tensor([-130.0, -129.0, -128.0, -127.0, -1.0, 0.0, 1.0, 126.0, 127.0, 128.0, 129.0])
    x = (steps + 0.2 * (ctx.rand(steps.numel()) - 0.5)) * 0.5
    ctx.expect_close(ctx.t("fake_quant(x, scale) with the default qmin and qmax (int8: -128 and 127)"),
                     mine.fake_quant(x, 0.5), torch.clamp(torch.round(x / 0.5), -128, 127) * 0.5)

    # What the clipping is for: train weights through the quantizer towards targets that partly
    # lie beyond the range. The loss falls to about that of the best clamped weights; the latent
    # weights beyond the range stop just past its end. With an unclipped STE the same loss is
    # reached but those weights keep being pushed outwards (50-90 steps from 0 after 50 SGD
    # steps here, against about 8.7-8.9 for the clipped one: the end, 8, plus one overshoot).
    ctx.phase(ctx.t("training weights through the quantizer"))
    scale, qmin, qmax = 0.25, -8, 7
    w_ideal = ctx.randn(8, 4, scale=2.0)  # some entries beyond [-2, 1.75]
    inputs = ctx.randn(64, 8)
    targets = inputs @ w_ideal
    w = ((ctx.rand(8, 4) * 2 - 1) * 1.5).requires_grad_()
    opt = torch.optim.SGD([w], lr=0.2)
    losses = []
    for _ in range(50):
        loss = torch.nn.functional.mse_loss(inputs @ mine.fake_quant(w, scale, qmin, qmax), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    drift = float(w.detach().abs().max()) / scale
    ctx.figure("training loss", {"first": losses[0], "last": losses[-1]},
               label=ctx.t("training loss through fake_quant: {first:.4g} at the first step, {last:.4g} at "
                           "step {steps}", first=losses[0], last=losses[-1], steps=len(losses)))
    ctx.figure("largest latent weight, in steps", drift,
               label=ctx.t("largest latent weight, in quantization steps"))
    ctx.expect(
        losses[-1] < 0.5 * losses[0],
        ctx.t(
            "training through fake_quant did not learn: loss {first:.3g} -> {last:.3g} (with a straight-through "
            "gradient it falls below half)",
            first=losses[0],
            last=losses[-1],
        ),
    )
    ctx.expect(
        drift < max(-qmin, qmax) + 3,
        ctx.t(
            "after training, a latent weight sits {steps:.0f} steps from 0 while the range is {qmin}..{qmax}: "
            "weights beyond the range are still being pushed outwards",
            steps=drift,
            qmin=qmin,
            qmax=qmax,
        ),
    )
