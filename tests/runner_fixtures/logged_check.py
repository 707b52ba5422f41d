"""The double checker, noting in $TUTOR_TEST_REFLOG which module each run checked."""

import os


def check(ctx):
    with open(os.environ["TUTOR_TEST_REFLOG"], "a") as f:
        f.write(ctx.learner.__name__ + "\n")
    for _ in ctx.trials(2):
        x = ctx.randn(8, 5)
        ctx.expect_close("output", ctx.learner.double(x), x * 2)
