"""A tiny checker used by the runner's own tests."""


def check(ctx):
    for _ in ctx.trials(3):
        x = ctx.randn(8, 5)
        out = ctx.no_mutation(ctx.learner.double, x)
        ctx.expect_close("output", out, x * 2)
    y = ctx.randn(64, 64)
    ctx.time(lambda: ctx.learner.double(y), lambda: ctx.reference.double(y), budget_s=0.05)
