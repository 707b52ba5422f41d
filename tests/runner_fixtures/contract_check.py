"""The checker of the call-contract tests: it states no contract itself (the runner's call
contract does), only the values."""

import torch


def check(ctx):
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    x = ctx.randn(5, 4)
    (ctx.tmpdir / "data.txt").write_text("the caller's file\n")
    out = ctx.learner.score(model, x)
    with torch.no_grad():
        ctx.expect_close("score", out, model(x).sum(dim=1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = ctx.learner.step(model, opt, x)
    ctx.expect_close("loss", loss, loss.detach())
    y = ctx.randn(6, requires_grad=True)
    g = torch.ones(6)
    ctx.learner.square(y).backward(g)
    ctx.expect_close("gradient", y.grad, 2 * y.detach())
    parts = [ctx.randn(3) for _ in range(4)]
    total = ctx.learner.total(parts)
    if not torch.allclose(total, sum(parts)):
        # A diagnosis only a wrong run makes: one more call into learner code than the
        # reference's run, which the judge must not mistake for a different path.
        ctx.learner.total(parts[:1])
    ctx.expect_close("total", total, sum(parts))
