"""A checker that judges through a module-level helper of its own (as chapter checkers do)."""


def judge(ctx, name, out, want):
    ctx.expect_close(name, out, want)


def check(ctx):
    double = ctx.learner.double
    for _ in ctx.trials(2):
        x = ctx.randn(8, 5)
        judge(ctx, "output", double(x), x * 2)
