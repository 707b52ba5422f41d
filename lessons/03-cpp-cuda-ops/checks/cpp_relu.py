"""Check: the learner's C++ ReLU builds, equals torch.relu for every shape and memory layout
and at the extremes (zeros, +-inf, NaN kept as NaN, huge values), leaves its input alone, and
rejects non-float32 or non-CPU input with a clear error."""

import torch
from _ch03_build import load_learner


def check(ctx):
    mine = load_learner(ctx, ctx.t("building your C++ extension…"))

    n = lambda: ctx.choice([1, 2, 7, 33, 129])  # noqa: E731 - awkward sizes
    shapes = [(n(),), (n(), n()), (n(), n(), n()), (0, n()), (1000,)]
    for trial in ctx.trials(len(shapes), ctx.t("values, trial")):
        x = ctx.randn(*shapes[trial], scale=3.0)
        out = ctx.no_mutation(mine.relu, x)
        ctx.expect_close(ctx.t("relu(x) for x of shape {shape}", shape=tuple(x.shape)), out, torch.relu(x))

    # Extremes: exact zeros (both signs), +-inf, NaN (torch.relu keeps NaN), huge magnitudes.
    ctx.phase(ctx.t("values at the extremes"))
    special = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 3e38, -3e38, 1e-45, -1e-45])
    x = torch.cat([special, ctx.randn(23, scale=3.0)])[torch.randperm(32, generator=ctx.generator)]
    # (ctx.no_mutation compares with ==, and NaN != NaN: compare NaN-aware here instead.)
    before, version = x.clone(), x._version
    out = mine.relu(x)
    same = bool(((x == before) | (x.isnan() & before.isnan())).all())
    ctx.expect(x._version == version and same, ctx.t("your function changed its input #{number} in place", number=1))
    expected = torch.relu(x)
    ctx.expect(isinstance(out, torch.Tensor) and out.shape == x.shape,
               ctx.t("relu(x) returned {kind} of shape {shape} for x of shape (32,)",
                     kind=type(out).__name__, shape=tuple(getattr(out, "shape", ()))))
    ctx.expect_equal(ctx.t("where relu(x) is NaN, for x with NaN, +-inf and zeros (torch.relu keeps NaN as NaN)"),
                     torch.isnan(out), torch.isnan(expected))
    ctx.expect_close(ctx.t("relu(x) for x with NaN, +-inf, zeros and huge values"), out, expected)
    # -0.0 == 0.0, so the comparison above cannot see the sign of a zero: torch.relu(-0.0) is -0.0
    # (the input passes through where `x < 0` is false). A `x <= 0 ? 0 : x` turns it into +0.0.
    number = ~torch.isnan(expected)
    ctx.expect_equal(ctx.t("the sign bit of relu(x) where x is -0.0 or +0.0 (torch.relu(-0.0) is -0.0: return the "
                           "input itself wherever `x < 0` is false)"),
                     torch.signbit(out) & number, torch.signbit(expected) & number)

    rows, cols = ctx.choice([3, 17, 64]), ctx.choice([5, 31, 100])
    layouts = [
        (ctx.t("a transposed (non-contiguous) x"), lambda: ctx.randn(rows, cols, noncontiguous=True)),
        (ctx.t("a strided slice x[:, ::2] (non-contiguous, with gaps)"), lambda: ctx.randn(rows, 2 * cols)[:, ::2]),
        (ctx.t("an expanded x (stride 0: one row seen many times)"), lambda: ctx.randn(1, cols).expand(rows, cols)),
    ]
    for i in ctx.trials(len(layouts), ctx.t("memory layouts, trial")):
        what, make = layouts[i]
        x = make()
        ctx.expect_close(ctx.t("relu(x) for {what}", what=what), mine.relu(x), torch.relu(x))

    ctx.phase(ctx.t("checking that bad input is rejected"))
    for dtype in (torch.float64, torch.int64):
        x = ctx.randn(4, 5).to(dtype)
        ctx.expect_raises(ctx.t("relu of a {dtype} tensor should raise an error",
                                dtype=str(dtype).replace("torch.", "")),
                          lambda: mine.relu(x), (RuntimeError, TypeError), match="float32")
    meta = torch.empty(4, 5, device="meta")
    ctx.expect_raises(ctx.t("relu of a tensor that is not on the CPU (here: on the `meta` device) should raise an error"),
                      lambda: mine.relu(meta), (RuntimeError, TypeError), match="cpu")
