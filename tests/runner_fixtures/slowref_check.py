"""A checker whose reference run takes seconds (its solution sleeps): time for the learner's
process to reach it while it runs."""


def check(ctx):
    x = ctx.randn(4, 3)
    ctx.expect_close("output", ctx.learner.double(x), x * 2)
