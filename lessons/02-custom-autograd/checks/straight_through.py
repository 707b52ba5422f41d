"""Check: RoundSTE rounds exactly like torch.round (halves included) and passes the upstream
gradient through unchanged; then it trains weights that are rounded in the forward pass."""

import torch
from torch.autograd.function import BackwardCFunction


def check(ctx):
    mine = ctx.learner
    ctx.expect(isinstance(mine.RoundSTE, type) and issubclass(mine.RoundSTE, torch.autograd.Function),
               ctx.t("{name} must subclass torch.autograd.Function", name="RoundSTE"))

    shapes = [(16, 10), (7,), (3, 5, 2), (1, 1), None, (5, 6)]
    for trial in ctx.trials(len(shapes)):
        dtype = torch.float64 if trial == 5 else torch.float32
        if shapes[trial] is None:
            # Exact halves (-3.5, -2.5, ..., 3.5): torch.round sends them to the even neighbour.
            x = (ctx.randint(-4, 4, (6, 8)) * 2 + 1).float() / 2
            what = ctx.t("for exact halves such as 0.5 and 2.5")
        else:
            x = ctx.randn(*shapes[trial], scale=3.0, dtype=dtype, noncontiguous=(trial == 2))
            what = ctx.t("for a {dtype} input", dtype="float64") if dtype == torch.float64 else ""
        x1 = x.detach().clone().requires_grad_()
        out = ctx.no_mutation(mine.round_ste, x1)
        ctx.expect(isinstance(out, torch.Tensor) and isinstance(out.grad_fn, BackwardCFunction),
                   ctx.t("{fn} must return the result of {apply}, so autograd calls your backward",
                         fn="round_ste", apply="RoundSTE.apply(x)"))
        ctx.expect_equal(ctx.t("{label} {where}", label="rounded output", where=what) if what else "rounded output",
                         out, torch.round(x))
        g = ctx.randn(*x.shape, scale=2.0, dtype=dtype)
        out.backward(g)
        grad = ctx.t("{label} {where}", label="gradient of x", where=what) if what else "gradient of x"
        ctx.expect_close(ctx.t("{grad} (straight-through: equal to the incoming gradient)", grad=grad), x1.grad, g)

    # What the STE is for: train weights that are rounded in forward. With the true derivative
    # of round (zero) nothing moves; with the STE the rounded weights reach the integer targets.
    ctx.phase("training weights through rounding")
    w_true = torch.round(ctx.randn(8, 4, scale=2.0))
    inputs = ctx.randn(64, 8)
    targets = inputs @ w_true
    w = ctx.randn(8, 4, scale=2.0).requires_grad_()
    opt = torch.optim.Adam([w], lr=0.1)
    losses = []
    for _ in range(200):
        loss = torch.nn.functional.mse_loss(inputs @ mine.round_ste(w), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    ctx.figure("training loss", {"first": losses[0], "last": losses[-1]})
    ctx.expect(losses[-1] < 0.1 * losses[0],
               ctx.t("training through round_ste did not learn: loss {first:.3g} -> {last:.3g} "
                     "(with a straight-through gradient it falls below a tenth)", first=losses[0], last=losses[-1]))
